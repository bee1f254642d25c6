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
import {
  type ConditionDefinition,
  defaultThresholds,
  type RuleId,
  type TextContext,
  type ThresholdValues,
} from './rule.js';

export const OBSERVATION_IDS = [
  'HighAddRateLowDepth',
  'RetriesWithoutErrorMetrics',
  'SteadyReconcileErrors',
  'ListDraining',
  'PriorityDepthUnknown',
] as const;
export type ObservationId = (typeof OBSERVATION_IDS)[number];

export type ObservationDefinition<K extends string = string> = ConditionDefinition<K> & {
  readonly id: ObservationId;
  /**
   * Rules whose finding on the same queue makes this observation redundant (the finding proves what the
   * observation only suggests): the engine drops the observation when the queue has one of them.
   */
  readonly supersededBy?: readonly RuleId[];
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
