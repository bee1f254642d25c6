/**
 * The threshold lines a rule draws on a signal's panel, with the configuration's `queues:` section applied
 * (the same cells of queues as the generated alerts, queue-cells.ts).
 *
 * Contract:
 * - A line whose value is the same for every queue (no entry changes it, none silences or disables the rule
 *   for some queues) stays a fixed line: a threshold step of the panel, as without `queues:`. Without a
 *   `queues:` entry for the rule every line is fixed, so the panel is what it was.
 * - Any other line is drawn per queue: a query whose series, one per queue (the queue's identity labels), has
 *   the threshold in force for that queue as its value: the cell's own where an entry changes it, the
 *   rule-wide one elsewhere. A silenced queue, or one for which an entry disables the rule, has no series: it
 *   has no active threshold. Each queue's series is its presence series (`queuePresence`) narrowed by its
 *   cell's matchers, times 0, plus the value; the cells are disjoint, so a queue has one series per line.
 * - A line the rule compares with the same threshold several times is drawn per queue once.
 */
import type { RuleOverrides } from '../../diagnosis/catalog.js';
import { signal } from '../../diagnosis/signals.js';
import { anyOf, binary, type Expr, type LabelMatcher, num, threshold } from '../../promql/expr.js';
import { narrowed } from '../../promql/narrowed.js';
import { renderMatchers } from '../../promql/render.js';
import { analyseRule, type SignalUse, type ThresholdLine } from '../condition-analysis.js';
import { type QueryScope, scopedIdentityLabels } from '../query-scope.js';
import { type QueueCell, queueCells } from '../queue-cells.js';
import { type RecordedSeries, signalSelection } from './common.js';

/** What a line is for some queues: its value, or no line because they are silenced or the rule is disabled. */
export type LineOutcome = number | 'silenced' | 'disabled';

/**
 * Queues with one outcome for a line: the cells that have it (merged where they can be, `mergedCells`), and
 * whether the queues no entry matches (the rule-wide settings) are among them.
 */
export type OutcomeQueues = {
  readonly outcome: LineOutcome;
  readonly cells: ReadonlyArray<readonly LabelMatcher[]>;
  readonly includesUnmatched: boolean;
};

/** A line drawn per queue: what the rule-wide line becomes with `queues:` applied. */
export type PerQueueLine = {
  /** The rule-wide line: its rule, severity, signal, comparison, threshold name and default value. */
  readonly line: ThresholdLine;
  /** Per queue, the value in force; undefined when no queue has one (every queue silenced or disabled). */
  readonly expr: Expr | undefined;
  /** The queues by outcome: the unmatched queues' first, then the other values, then the queues without one. */
  readonly outcomes: readonly OutcomeQueues[];
};

export type RuleLinesOnSignal = {
  /** Lines with one value for every queue, in the rule's order (repeated comparisons repeated). */
  readonly fixed: readonly ThresholdLine[];
  readonly perQueue: readonly PerQueueLine[];
};

/**
 * Every work queue exports its depth, in both label schemas: its series, narrowed to the dashboard's
 * selection of queues, are where a per-queue line has a value.
 */
export function queuePresence(scope: QueryScope, recorded: RecordedSeries): Expr {
  return signalSelection(signal('depth'), scopedIdentityLabels('queue', scope), scope, recorded);
}

/** The lines `use`'s rule draws on its signal, with `overrides.queues` applied; `presence` from `queuePresence`. */
export function ruleLinesOnSignal(use: SignalUse, overrides: RuleOverrides, presence: Expr): RuleLinesOnSignal {
  const { analysis } = use;
  if (use.lines.length === 0) return { fixed: [], perQueue: [] };
  const onSignal = new Set(use.lines);
  const cells = queueCells(analysis.settings.rule.id, overrides).map((cell) => ({
    cell,
    lines: cell.silenced || !cell.settings.enabled ? undefined : analyseRule(cell.settings).lines,
  }));
  const fixed: ThresholdLine[] = [];
  const perQueue: PerQueueLine[] = [];
  const drawn = new Set<string>();
  analysis.lines.forEach((line, index) => {
    if (!onSignal.has(line)) return;
    const perCell = cells.map(({ cell, lines }): { cell: QueueCell; outcome: LineOutcome } => {
      if (lines === undefined) return { cell, outcome: cell.silenced ? 'silenced' : 'disabled' };
      const own = lines[index];
      // The condition is one tree whatever its thresholds: the same comparison sits at the same place.
      if (own === undefined || own.signal !== line.signal || own.op !== line.op || own.threshold !== line.threshold) {
        throw new Error(`${line.rule}: line ${index} on ${line.signal} differs between the settings of its queues`);
      }
      return { cell, outcome: own.value };
    });
    if (perCell.every((c) => c.outcome === line.value)) {
      fixed.push(line);
      return;
    }
    const key = line.threshold ?? `#${index}`;
    if (drawn.has(key)) return;
    drawn.add(key);
    const outcomes = outcomeQueues(perCell);
    const branches = outcomes.flatMap(({ outcome, cells: queues }) =>
      typeof outcome === 'number' ? queues.map((matchers) => thresholdSeries(presence, matchers, line, outcome)) : [],
    );
    const [first, ...rest] = branches;
    perQueue.push({ line, expr: first === undefined ? undefined : anyOf(first, ...rest), outcomes });
  });
  return { fixed, perQueue };
}

/** The cells grouped by outcome, each group's cells merged, in the order `PerQueueLine.outcomes` states. */
function outcomeQueues(perCell: ReadonlyArray<{ cell: QueueCell; outcome: LineOutcome }>): OutcomeQueues[] {
  const groups = new Map<LineOutcome, { cells: Array<readonly LabelMatcher[]>; includesUnmatched: boolean }>();
  for (const { cell, outcome } of perCell) {
    const group = groups.get(outcome) ?? { cells: [], includesUnmatched: false };
    group.cells.push(cell.matchers);
    if (cell.isDefault) group.includesUnmatched = true;
    groups.set(outcome, group);
  }
  const rank = (o: OutcomeQueues) => (o.includesUnmatched ? 0 : typeof o.outcome === 'number' ? 1 : 2);
  return [...groups]
    .map(([outcome, group]) => ({
      outcome,
      cells: mergedCells(group.cells),
      includesUnmatched: group.includesUnmatched,
    }))
    .sort((a, b) => rank(a) - rank(b));
}

/** `value` on every queue of a cell: the cell's presence series times 0, plus the threshold. */
function thresholdSeries(presence: Expr, matchers: readonly LabelMatcher[], line: ThresholdLine, value: number): Expr {
  const valueNode = line.threshold === undefined ? num(value) : threshold(line.threshold, value);
  return binary('+', binary('*', narrowed(presence, matchers), num(0)), valueNode);
}

/** A line's value as the descriptions print it: `20 (minDepth)`, or the number alone when it has no name. */
export function formatLineValue(line: Pick<ThresholdLine, 'value' | 'threshold'>): string {
  return line.threshold === undefined ? String(line.value) : `${line.value} (${line.threshold})`;
}

/** What a per-queue line is called in the legend and the description: its threshold, and the rule. */
export function perQueueLineTitle(line: ThresholdLine): string {
  return `${line.threshold ?? `${line.op} ${line.value}`} (${line.rule})`;
}

/** A per-queue line in words: each value and the queues that have it, the unmatched queues' first. */
export function describePerQueueLine(perQueue: PerQueueLine): string {
  const parts = perQueue.outcomes.map(({ outcome, cells, includesUnmatched }) => {
    const what =
      typeof outcome === 'number'
        ? formatLineValue({ ...perQueue.line, value: outcome })
        : outcome === 'silenced'
          ? 'none (silenced)'
          : 'none (rule disabled)';
    // The other outcomes name their queues: the unmatched ones' outcome is every other queue's.
    const where = includesUnmatched
      ? 'every other queue'
      : cells.map((matchers) => `\`${renderMatchers(matchers)}\``).join(' or ');
    return `${what} for ${where}`;
  });
  return `**${perQueueLineTitle(perQueue.line)}**: ${parts.join('; ')}`;
}

/**
 * Cells in fewer words: two that differ only in one label, `=` a value in one and `!=` it in the other, are
 * together the cell without that matcher (`{name="a", controller="c"}` and `{name!="a", controller="c"}` are
 * `{controller="c"}`), until no two do.
 */
function mergedCells(cells: ReadonlyArray<readonly LabelMatcher[]>): Array<readonly LabelMatcher[]> {
  const out = [...cells];
  const key = (m: LabelMatcher) => `${m.label}${m.op}${m.value}`;
  for (let i = 0; i < out.length; i += 1) {
    for (let j = i + 1; j < out.length; j += 1) {
      const a = out[i] ?? [];
      const b = out[j] ?? [];
      const onlyA = a.filter((m) => !b.some((n) => key(n) === key(m)));
      const onlyB = b.filter((m) => !a.some((n) => key(n) === key(m)));
      const [x] = onlyA;
      const [y] = onlyB;
      if (onlyA.length !== 1 || onlyB.length !== 1 || x === undefined || y === undefined) continue;
      const complementary = x.label === y.label && x.value === y.value && [x.op, y.op].sort().join(' ') === '!= =';
      if (!complementary) continue;
      out[i] = a.filter((m) => m !== x);
      out.splice(j, 1);
      // The merged cell may now merge with an earlier one: start over.
      i = -1;
      break;
    }
  }
  return out;
}
