/**
 * The shape of a diagnosis: one object per diagnosis, in its own file under `rules/`, from which the
 * in-process check, the alert rule, the dashboard panels, the runbook and the REST text are all derived.
 * Nothing outside a rule file carries one of its thresholds.
 */

import { type Expr, threshold } from '../promql/expr.js';
import type { IdentityScope } from './identity.js';
import type { SignalId } from './signals.js';
import type { SignalValue, Unit } from './units.js';

/**
 * Every rule id, in the one order of the rules everywhere: what an on-call engineer should look at first. The
 * catalog (`RULES`), and so the engine, the generated alerts, dashboards and runbooks and `/api/v1/rules`, the
 * report schema's enum and the calibration tables all follow it; each id has one definition under `rules/`.
 */
/** The rule evaluation interval: the step of `for` checks in the engine and the `interval` of the generated rule group. */
export const EVALUATION_INTERVAL_MS = 30_000;

export const RULE_IDS = [
  'WorkqueueStuckWorker',
  'WorkqueueBacklog',
  'WorkqueueHotLoop',
  'WorkqueueSaturated',
  'WorkqueueSlowWork',
  'WorkqueuePersistentFailures',
  'WorkqueueNotObservable',
] as const;
export type RuleId = (typeof RULE_IDS)[number];
export const SEVERITIES = ['warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export type ThresholdSpec = {
  readonly default: number;
  /** The unit of the threshold; `count` for plain numbers, `duration` for seconds that render as `5m`. */
  readonly unit: Unit | 'count';
  readonly description: string;
  /**
   * The values that make sense, both ends included; an override outside is a configuration error. Default
   * `NON_NEGATIVE`: every threshold compares a rate, a count, a ratio or a duration, none below 0.
   */
  readonly range?: ThresholdRange;
};

export type ThresholdRange = { readonly min: number; readonly max: number };
export const NON_NEGATIVE: ThresholdRange = { min: 0, max: Number.POSITIVE_INFINITY };
/** A share of a whole: a fraction of syncs, of workers' time, of the completion rate. */
export const SHARE: ThresholdRange = { min: 0, max: 1 };

/** Threshold values in force, by threshold name (defaults merged with overrides). */
export type ThresholdValues<K extends string = string> = Readonly<Record<K, number>>;

/**
 * Thresholds as a condition receives them: named threshold nodes carrying the values in force, so the tree
 * says which number is which threshold. The condition builders (`compare`, `scale`, ...) take them as they
 * take plain numbers.
 */
export type ThresholdNodes<K extends string = string> = Readonly<Record<K, Expr>>;

/** Signal values of one queue at the evaluation time, by signal id. */
export type SignalSnapshot = Readonly<Record<string, SignalValue>>;

/** What a rule's texts can use: the queue's signals and the thresholds in force. */
export type TextContext<K extends string = string> = {
  readonly signals: SignalSnapshot;
  readonly thresholds: ThresholdValues<K>;
  /** Set for target-level findings a rule's `assessTarget` raises (e.g. the scrape error of an unreachable target). */
  readonly detail?: string;
};

/** Where the condition's output series attach: one per queue, or one per target (process). */
export type RuleScope = 'queue' | 'target';

/** The identity scope of a rule's output series (a target is its process). */
export function ruleIdentityScope(scope: RuleScope): IdentityScope {
  return scope === 'queue' ? 'queue' : 'process';
}

/**
 * What a rule and an observation both are: thresholds, a condition that must hold at every evaluation step
 * for `forMs`, and the evidence shown when it does.
 */
export type ConditionDefinition<K extends string = string> = {
  readonly title: string;
  readonly thresholds: Readonly<Record<K, ThresholdSpec>>;
  /** How long the condition must hold at every evaluation step before it is reported (an alert's `for`). */
  readonly forMs: number;
  /**
   * The condition as an expression: a queue (or target) is affected while the expression returns a
   * series for it. Evaluated in-process step by step; a rule's is also its alert `expr`.
   */
  condition(thresholds: ThresholdNodes<K>): Expr;
  /** Signals reported as evidence, in order of importance. */
  readonly evidence: readonly SignalId[];
  /** Extra evidence computed from the signals (e.g. time to drain); keys become evidence entries. */
  derive?(signals: SignalSnapshot, thresholds: ThresholdValues<K>): Record<string, SignalValue>;
  /** Titles of the entries `derive` returns, for people (text reports, runbooks). */
  readonly derivedTitles?: Readonly<Record<string, string>>;
};

/**
 * What the engine knows of a target without queues when it asks a target-scope rule about it. Standby
 * replicas (leader election lost) are settled before: they are never assessed.
 */
/** A finding while the rule's condition has held for the target for its whole `for`; nothing otherwise. */
export function conditionHeld(target: TargetFacts): TargetAssessment | undefined {
  return target.holdingSinceMs === undefined ? undefined : { kind: 'finding', sinceMs: target.holdingSinceMs };
}

export type TargetFacts = {
  /** Set when the target could not be read at all. */
  readonly error?: { readonly code: string; readonly message: string };
  /** When the rule's condition has held for the target at every step of its `for`: since when. */
  readonly holdingSinceMs?: number;
  /** The target exposes controller-runtime metrics. */
  readonly hasControllerMetrics: boolean;
  /** The caller scraped or replayed the target itself (it was not only seen in series). */
  readonly listed: boolean;
  /**
   * The target has work queues, reported on their own; a target rule finds something on it only where its
   * condition holds, which the queues' presence normally rules out.
   */
  readonly hasQueues: boolean;
  /**
   * The target was read and says it does not hold the leader lease (`leader_election_master_status` 0): a
   * standby replica, without queues by design. Reported as `standby` when no target rule finds anything.
   */
  readonly standby: boolean;
};

/**
 * A target-scope rule's verdict on a target without queues: a finding (with its `since` and the detail its
 * texts read), or `unknown` (not diagnosable yet, no finding). Nothing: the target is not reported.
 */
export type TargetAssessment =
  | { readonly kind: 'finding'; readonly sinceMs: number | null; readonly detail?: string }
  | { readonly kind: 'unknown'; readonly reason: string };

export type DiagnosisRule<K extends string = string> = ConditionDefinition<K> & {
  readonly id: RuleId;
  readonly severity: Severity;
  readonly scope: RuleScope;
  /**
   * How long a firing finding stays firing after its condition last held (an alert's `keep_firing_for`): a
   * condition that holds again within it neither ends the finding nor starts its `for` again. None by default.
   */
  readonly keepFiringForMs?: number;
  /**
   * Target-scope rules: what the engine reports for a target without queues, from what it knows of the
   * target. Without it, a target-scope rule reports a finding for the targets its condition holds for.
   */
  assessTarget?(target: TargetFacts): TargetAssessment | undefined;
  readonly text: {
    /** One line with the measured values. */
    summary(context: TextContext<K>): string;
    /** What the diagnosis means, for the runbook and the alert description. */
    readonly meaning: string;
    /** The likely cause; may adapt to the evidence (e.g. status write vs missing backoff). */
    cause(context: TextContext<K>): string;
    fix(context: TextContext<K>): string;
    /**
     * For rules whose cause and fix depend on the evidence: every case, so a runbook (which has no
     * measurements) can list them all. `cause` and `fix` pick one of these.
     */
    readonly cases?: readonly RuleCase[];
    /** How to confirm: what to look at, with the signals whose PromQL to run. */
    readonly confirm: readonly { readonly text: string; readonly signals: readonly SignalId[] }[];
  };
};

export type RuleCase = { readonly when: string; readonly cause: string; readonly fix: string };

/** Identity helper that keeps the threshold names typed inside a rule file. */
export function defineRule<K extends string>(rule: DiagnosisRule<K>): DiagnosisRule<K> {
  return rule;
}

/** The threshold values in force as threshold nodes, for building a condition. */
export function thresholdNodes<K extends string>(values: ThresholdValues<K>): ThresholdNodes<K> {
  const out = {} as Record<K, Expr>;
  for (const [name, value] of Object.entries(values) as Array<[K, number]>) out[name] = threshold(name, value);
  return out;
}

/** The condition of a rule or observation with the thresholds in force. */
export function conditionWith<K extends string>(definition: ConditionDefinition<K>, values: ThresholdValues<K>): Expr {
  return definition.condition(thresholdNodes(values));
}

/** The default thresholds of a rule (or of an observation, which declares them the same way). */
export function defaultThresholds<K extends string>(
  definition: Pick<ConditionDefinition<K>, 'thresholds'>,
): ThresholdValues<K> {
  const out = {} as Record<K, number>;
  for (const [name, spec] of Object.entries(definition.thresholds) as Array<[K, ThresholdSpec]>)
    out[name] = spec.default;
  return out;
}
