/**
 * The shape of an observation: what a queue's metrics suggest but cannot prove (DESIGN.md §4). One object
 * per observation, in its own file under `observations/`, built from the same signals and condition helpers
 * as the rules and evaluated by the engine with the same `for` semantics.
 *
 * An observation is never a finding: it appears in the report (`queues[].observations`), the text report and
 * the rule catalog's `observations` key, and never in the generated alerts, in `workqueue_doctor_finding`,
 * in `--fail-on`, in a queue's status or in calibration. Nothing outside an observation file carries one of
 * its thresholds.
 */
import type { Expr } from './expr.js';
import {
  defaultThresholds,
  type RuleId,
  type SignalSnapshot,
  type TextContext,
  type ThresholdSpec,
  type ThresholdValues,
} from './rule.js';
import type { SignalId } from './signals.js';
import type { SignalValue } from './units.js';

export const OBSERVATION_IDS = ['HighAddRateLowDepth', 'RetriesWithoutErrorMetrics', 'ListDraining'] as const;
export type ObservationId = (typeof OBSERVATION_IDS)[number];

export type ObservationDefinition<K extends string = string> = {
  readonly id: ObservationId;
  readonly title: string;
  readonly thresholds: Readonly<Record<K, ThresholdSpec>>;
  /** How long the condition must hold at every evaluation step before it is reported, as a rule's `for`. */
  readonly forMs: number;
  /**
   * The condition as an expression over queue-level series: a queue shows the observation while the
   * expression returns a series for it. Evaluated in-process step by step, never rendered as an alert.
   */
  condition(thresholds: ThresholdValues<K>): Expr;
  /**
   * Rules whose finding on the same queue makes this observation redundant (the finding proves what the
   * observation only suggests): the engine drops the observation when the queue has one of them.
   */
  readonly supersededBy?: readonly RuleId[];
  /** Signals reported as evidence, in order of importance. */
  readonly evidence: readonly SignalId[];
  /** Extra evidence computed from the signals (e.g. time to drain); keys become evidence entries. */
  derive?(signals: SignalSnapshot, thresholds: ThresholdValues<K>): Record<string, SignalValue>;
  /** Titles of the entries `derive` returns, for people (text reports). */
  readonly derivedTitles?: Readonly<Record<string, string>>;
  readonly text: {
    /** One line with the measured values. */
    summary(context: TextContext<K>): string;
    /** What it suggests, what the metrics cannot prove, and what to check to tell. */
    readonly meaning: string;
  };
};

/** An observation with the thresholds and `for` in force (today always its defaults). */
export type ObservationSettings = {
  readonly observation: ObservationDefinition;
  readonly thresholds: ThresholdValues;
  readonly forMs: number;
};

/** Identity helper that keeps the threshold names typed inside an observation file. */
export function defineObservation<K extends string>(observation: ObservationDefinition<K>): ObservationDefinition<K> {
  return observation;
}

export function observationSettings(observation: ObservationDefinition): ObservationSettings {
  return { observation, thresholds: defaultThresholds(observation), forMs: observation.forMs };
}
