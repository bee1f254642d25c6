/**
 * What a calibration case owes before it is run: the findings its ground truth expects and the latest time one
 * of them is due (`expectedFrom`), read from the scenario's truth for the case's parameters. A run that ends
 * before that time can never miss the finding, so grids and tests size their durations from it.
 */
import type { RuleId } from '../diagnosis/rule.js';
import { getScenario, groundTruth, resolveParams } from '../simulate/index.js';
import { expectedFrom } from './compare.js';
import type { CalibrationCase } from './run.js';

/** How long past its due time a finding is judged at least, so that a miss fails at several steps. */
export const OWED_FOR_MS = 5 * 60_000;

export interface Owed {
  /** Every finding some queue's truth expects. */
  readonly rules: readonly RuleId[];
  /** The latest time, from the start of the run, at which an expected finding is due; 0 when none is. */
  readonly latestDueMs: number;
  /** The shortest run that judges every expected finding for `OWED_FOR_MS` past its due time; 0 when none is owed. */
  readonly shortestRunMs: number;
}

export function owedBy(c: CalibrationCase): Owed {
  const { scenario: name, ...params } = c;
  const scenario = getScenario(name);
  const truth = groundTruth(scenario, resolveParams(params, scenario));
  const owing = truth.queues.filter((q) => q.expected.length > 0);
  const latestDueMs = Math.max(0, ...owing.map((q) => expectedFrom(q)));
  return {
    rules: [...new Set(owing.flatMap((q) => q.expected))],
    latestDueMs,
    shortestRunMs: owing.length > 0 ? latestDueMs + OWED_FOR_MS : 0,
  };
}
