import { EvaluationMemory } from '../diagnosis/holding.js';
/**
 * Runs scenarios on virtual time, diagnoses each recording at its end, and scores the findings against
 * the scenario's ground truth. The recording goes through the same reader and engine as
 * `diagnose --recording`.
 */

import { memoizedBackend } from '../diagnosis/backend.js';
import { RULES, type RuleOverrides } from '../diagnosis/catalog.js';
import { EVALUATION_INTERVAL_MS } from '../diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { diagnoseSource } from '../service/diagnose-source.js';
import { runVirtual, type SimulationParams, type VirtualRun } from '../simulate/index.js';
import { recordingSourceFromText } from '../sources/recording-source.js';
import { compareWithTruth, type QueueVerdict } from './compare.js';

/** One run: a scenario with parameters (defaults where absent). */
export type CalibrationCase = {
  readonly scenario: string;
  /** The interval the recording is scraped at (the simulator's default where absent). */
  readonly scrapeIntervalMs?: number;
} & Partial<SimulationParams>;

export type JudgeOptions = {
  /**
   * Judge at every evaluation step from the shortest rule `for` to the end (a problem must be caught at
   * each of them once its truth expects it, a near miss must stay silent at each), not only at the end.
   */
  readonly everyStep?: boolean;
};

/** The first time a finding can exist: no rule holds before its `for` has passed. */
export const FIRST_JUDGED_MS = Math.min(...RULES.map((rule) => rule.forMs));

export async function runCase(
  c: CalibrationCase,
  overrides: RuleOverrides = {},
  options: JudgeOptions = {},
): Promise<QueueVerdict[]> {
  const run = await simulateCase(c);
  const file = `${c.scenario}-${c.seed ?? 'default'}.om`;
  const source = recordingSourceFromText(run.recording.text(), file);
  // Kept across the judged times, as the service keeps it across its evaluations: a recording's data does not
  // change once read, so every step a condition was evaluated at stays valid and `since` is carried.
  const memory = new EvaluationMemory();
  try {
    const range = source.dataRange();
    if (range === undefined) throw new Error(`scenario ${c.scenario} produced an empty recording`);
    const verdicts: QueueVerdict[] = [];
    const backend = memoizedBackend(source.backend);
    for (const atMs of judgedTimes(range, options)) {
      const report = await diagnoseSource(source, {
        atMs,
        runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL,
        overrides,
        backend,
        memory,
      });
      verdicts.push(...compareWithTruth(report, run.truth, atMs - range.startMs));
    }
    return verdicts;
  } finally {
    memory.close();
    await source.close();
  }
}

/** `c`'s scenario run on virtual time and recorded at its scrape interval. */
export function simulateCase(c: CalibrationCase): Promise<VirtualRun> {
  const { scenario, scrapeIntervalMs, ...params } = c;
  return runVirtual(scenario, params, scrapeIntervalMs === undefined ? {} : { scrapeIntervalMs });
}

/** The end of the recording; with `everyStep`, every evaluation step from the first `for` up to it. */
function judgedTimes(range: { startMs: number; endMs: number }, options: JudgeOptions): number[] {
  if (options.everyStep !== true) return [range.endMs];
  return everyJudgedStep(range);
}

/**
 * The times a recording is judged at step by step: the evaluation grid's steps (multiples of the interval, where
 * the service evaluates) from the first `for` after its start, and its end. On the grid, a `since` carried from one
 * judged time to the next is the one traced back from the last: the same report as the service's.
 */
export function everyJudgedStep(range: { readonly startMs: number; readonly endMs: number }): number[] {
  const times: number[] = [];
  const first = range.startMs + FIRST_JUDGED_MS;
  for (
    let t = Math.ceil(first / EVALUATION_INTERVAL_MS) * EVALUATION_INTERVAL_MS;
    t < range.endMs;
    t += EVALUATION_INTERVAL_MS
  ) {
    times.push(t);
  }
  times.push(range.endMs);
  return times;
}

export function describeCase(c: CalibrationCase): string {
  const parts = [c.scenario];
  if (c.seed !== undefined) parts.push(`seed=${c.seed}`);
  if (c.workers !== undefined) parts.push(`workers=${c.workers}`);
  if (c.keys !== undefined) parts.push(`keys=${c.keys}`);
  if (c.rate !== undefined) parts.push(`rate=${c.rate}`);
  if (c.failingKeys !== undefined) parts.push(`failingKeys=${c.failingKeys}`);
  if (c.invalidKeys !== undefined) parts.push(`invalidKeys=${c.invalidKeys}`);
  if (c.pollingKeys !== undefined) parts.push(`pollingKeys=${c.pollingKeys}`);
  if (c.backoffBaseMs !== undefined) parts.push(`backoffBaseMs=${c.backoffBaseMs}`);
  if (c.loopKeys !== undefined) parts.push(`loopKeys=${c.loopKeys}`);
  if (c.writesPerSync !== undefined) parts.push(`writesPerSync=${c.writesPerSync}`);
  if (c.listWrites !== undefined) parts.push(`listWrites=${c.listWrites}`);
  if (c.statusAtMs !== undefined) parts.push(`statusAtMs=${c.statusAtMs}`);
  if (c.transientShare !== undefined) parts.push(`transientShare=${c.transientShare}`);
  if (c.outageSeconds !== undefined) parts.push(`outageSeconds=${c.outageSeconds}`);
  if (c.spikeSeconds !== undefined) parts.push(`spikeSeconds=${c.spikeSeconds}`);
  if (c.batchSize !== undefined) parts.push(`batchSize=${c.batchSize}`);
  if (c.relistAtSeconds !== undefined) parts.push(`relistAtSeconds=${c.relistAtSeconds}`);
  if (c.blockingShare !== undefined) parts.push(`blockingShare=${c.blockingShare}`);
  if (c.blockingSeconds !== undefined) parts.push(`blockingSeconds=${c.blockingSeconds}`);
  if (c.syncMs !== undefined) parts.push(`syncMs=${c.syncMs}`);
  if (c.durationMs !== undefined) parts.push(`duration=${c.durationMs / 60_000}m`);
  if (c.flavor !== undefined) parts.push(`flavor=${c.flavor}`);
  if (c.queue !== undefined) parts.push(`queue=${c.queue}`);
  if (c.scrapeIntervalMs !== undefined) parts.push(`scrape=${c.scrapeIntervalMs / 1000}s`);
  return parts.join(' ');
}
