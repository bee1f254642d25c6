/**
 * The rule catalog: every diagnosis, and the thresholds in force after a user's overrides.
 * Overrides are per rule, optionally narrowed to queues matched by name and controller.
 */

import { type DiagnosisRule, defaultThresholds, RULE_IDS, type RuleId, type ThresholdValues } from './rule.js';
import { backlog } from './rules/backlog.js';
import { hotLoop } from './rules/hot-loop.js';
import { notObservable } from './rules/not-observable.js';
import { persistentFailures } from './rules/persistent-failures.js';
import { saturated } from './rules/saturated.js';
import { slowWork } from './rules/slow-work.js';
import { stuckWorker } from './rules/stuck-worker.js';

/** One per file under `rules/`, in no meaningful order: `RULE_IDS` orders them. */
const DEFINITIONS = [
  backlog,
  hotLoop,
  notObservable,
  persistentFailures,
  saturated,
  slowWork,
  stuckWorker,
] as readonly DiagnosisRule[];

/** Every rule, in `RULE_IDS` order (what an on-call engineer should look at first). */
export const RULES: readonly DiagnosisRule[] = RULE_IDS.map((id) => {
  const found = DEFINITIONS.filter((r) => r.id === id);
  if (found.length !== 1) throw new Error(`rule ${id}: ${found.length} definitions`);
  return found[0] as DiagnosisRule;
});
if (RULES.length !== DEFINITIONS.length) throw new Error('a rule definition has an id outside RULE_IDS');

export const RULE_BY_ID: ReadonlyMap<RuleId, DiagnosisRule> = new Map(RULES.map((r) => [r.id, r]));

export function rule(id: RuleId): DiagnosisRule {
  const found = RULE_BY_ID.get(id);
  if (found === undefined) throw new Error(`unknown rule ${id}`);
  return found;
}

/** A user's adjustments; validated at the edge (config loading), trusted here. */
export type RuleOverrides = {
  /** Threshold overrides by rule id, then threshold name. `for` overrides the duration, in milliseconds. */
  readonly rules?: Readonly<Partial<Record<RuleId, RuleOverride>>>;
  /** Queue-specific overrides, applied in order after the rule-wide ones (later entries win). */
  readonly queues?: readonly QueueOverride[];
};
export type RuleOverride = {
  readonly thresholds?: Readonly<Record<string, number>>;
  readonly forMs?: number;
  readonly disabled?: boolean;
  /**
   * A condition that replaces the rule's own (built from the same thresholds). Programmatic only: the mutation
   * runs of the calibration use it; a configuration file cannot set it.
   */
  readonly condition?: DiagnosisRule['condition'];
};
export type QueueOverride = {
  /** Matches the queue's `name` label exactly; absent matches any. */
  readonly name?: string;
  /** Matches the queue's `controller` label exactly; absent matches any. */
  readonly controller?: string;
  /** Silences every finding of the matched queues. */
  readonly silenced?: boolean;
  readonly rules?: Readonly<Partial<Record<RuleId, RuleOverride>>>;
};

export type RuleSettings = {
  readonly rule: DiagnosisRule;
  readonly thresholds: ThresholdValues;
  readonly forMs: number;
  /** The rule's `keepFiringForMs`, 0 without one. */
  readonly keepFiringForMs: number;
  readonly enabled: boolean;
};

/** The settings of every rule in force for the queues no queue override matches. */
export function ruleSettings(overrides: RuleOverrides = {}): RuleSettings[] {
  return RULES.map((r) => settingsFor(r, [overrides.rules?.[r.id]]));
}

/** The settings in force for one queue: rule-wide overrides, then matching queue overrides in order. */
export function ruleSettingsForQueue(
  overrides: RuleOverrides,
  queue: { readonly name: string | null; readonly controller: string | null },
): { settings: RuleSettings[]; silenced: boolean } {
  const matching = (overrides.queues ?? []).filter(
    (q) =>
      (q.name === undefined || q.name === queue.name) &&
      (q.controller === undefined || q.controller === queue.controller),
  );
  return {
    settings: RULES.map((r) => settingsFor(r, [overrides.rules?.[r.id], ...matching.map((q) => q.rules?.[r.id])])),
    silenced: matching.some((q) => q.silenced === true),
  };
}

function settingsFor(r: DiagnosisRule, layers: ReadonlyArray<RuleOverride | undefined>): RuleSettings {
  const thresholds: Record<string, number> = { ...defaultThresholds(r) };
  let forMs = r.forMs;
  let enabled = true;
  let rule = r;
  for (const layer of layers) {
    if (layer === undefined) continue;
    Object.assign(thresholds, layer.thresholds ?? {});
    if (layer.forMs !== undefined) forMs = layer.forMs;
    if (layer.disabled !== undefined) enabled = !layer.disabled;
    if (layer.condition !== undefined) rule = { ...r, condition: layer.condition };
  }
  return { rule, thresholds, forMs, keepFiringForMs: r.keepFiringForMs ?? 0, enabled };
}
