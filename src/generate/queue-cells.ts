/**
 * The `queues:` section of the configuration as label matchers, for the generated alerts: for one rule, the
 * queues split into cells, each a conjunction of matchers on the queue's `name` and `controller` labels, with
 * the settings the service applies to the queues in it (`ruleSettingsForQueue`: the rule-wide overrides, then
 * the matching entries in order, later entries win) and whether they are silenced.
 *
 * Contract:
 * - The cells are disjoint and cover every queue: each queue is in exactly one. Only the entries that change
 *   the rule (their `rules:` name it) or silence queues split the queues; without any, the one cell has no
 *   matcher and the rule-wide settings.
 * - An entry matches a cell's queues when the cell has its `name` and `controller` as `=` matchers; a cell
 *   outside an entry carries a `!=` matcher on one of them (an entry with both is left through either).
 * - `isDefault`: no entry matches the cell's queues (the rule-wide settings).
 */
import { type RuleOverrides, type RuleSettings, ruleSettingsForQueue } from '../diagnosis/catalog.js';
import type { RuleId } from '../diagnosis/rule.js';
import { LABEL } from '../metrics/names.js';
import type { LabelMatcher } from '../promql/expr.js';

export type QueueCell = {
  readonly matchers: readonly LabelMatcher[];
  readonly settings: RuleSettings;
  readonly silenced: boolean;
  readonly isDefault: boolean;
};

/** The queue labels an entry matches on, in the order matchers are written. */
const QUEUE_MATCH_LABELS = [LABEL.name, LABEL.controller] as const;
type MatchLabel = (typeof QUEUE_MATCH_LABELS)[number];

/** Per label: the value it must have, or the values it must not have. */
type Cell = ReadonlyMap<MatchLabel, { readonly equals?: string; readonly not: ReadonlySet<string> }>;

export function queueCells(ruleId: RuleId, overrides: RuleOverrides): QueueCell[] {
  const entries = (overrides.queues ?? []).filter((q) => q.silenced === true || q.rules?.[ruleId] !== undefined);
  let cells: Cell[] = [new Map()];
  for (const entry of entries) {
    const constraints = QUEUE_MATCH_LABELS.flatMap((label) => {
      const value = label === LABEL.name ? entry.name : entry.controller;
      return value === undefined ? [] : [{ label, value }];
    });
    cells = cells.flatMap((cell) => {
      const pieces: Cell[] = [];
      // Inside the entry: every constraint holds.
      const inside = constraints.reduce<Cell | undefined>((c, k) => c && withEquals(c, k.label, k.value), cell);
      if (inside !== undefined) pieces.push(inside);
      // Outside: the first i constraints hold and the next one does not, for each i.
      let prefix: Cell | undefined = cell;
      for (const k of constraints) {
        if (prefix === undefined) break;
        const outside = withNot(prefix, k.label, k.value);
        if (outside !== undefined) pieces.push(outside);
        prefix = withEquals(prefix, k.label, k.value);
      }
      return pieces;
    });
  }
  return cells.map((cell) => {
    const queue = {
      name: cell.get(LABEL.name)?.equals ?? null,
      controller: cell.get(LABEL.controller)?.equals ?? null,
    };
    const forQueue = ruleSettingsForQueue(overrides, queue);
    const settings = forQueue.settings.find((s) => s.rule.id === ruleId);
    if (settings === undefined) throw new Error(`no settings for ${ruleId}`);
    const isDefault = !entries.some(
      (e) =>
        (e.name === undefined || e.name === queue.name) &&
        (e.controller === undefined || e.controller === queue.controller),
    );
    return { matchers: matchersOf(cell), settings, silenced: forQueue.silenced, isDefault };
  });
}

function withEquals(cell: Cell, label: MatchLabel, value: string): Cell | undefined {
  const at = cell.get(label) ?? { not: new Set<string>() };
  if ((at.equals !== undefined && at.equals !== value) || at.not.has(value)) return undefined;
  return new Map(cell).set(label, { equals: value, not: new Set() });
}

function withNot(cell: Cell, label: MatchLabel, value: string): Cell | undefined {
  const at = cell.get(label) ?? { not: new Set<string>() };
  if (at.equals === value) return undefined;
  // A label with its value fixed already excludes every other value.
  if (at.equals !== undefined) return cell;
  return new Map(cell).set(label, { not: new Set([...at.not, value]) });
}

function matchersOf(cell: Cell): LabelMatcher[] {
  return QUEUE_MATCH_LABELS.flatMap((label): LabelMatcher[] => {
    const at = cell.get(label);
    if (at === undefined) return [];
    if (at.equals !== undefined) return [{ label, op: '=', value: at.equals } satisfies LabelMatcher];
    return [...at.not].sort().map((value): LabelMatcher => ({ label, op: '!=', value }));
  });
}
