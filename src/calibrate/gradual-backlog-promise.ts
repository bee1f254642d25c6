/**
 * The product's promise for a queue that falls behind gradually: it is reported within `GRADUAL_BACKLOG_PROMISE_MS`
 * of ceasing to drain, that is of the last time its depth was zero (a queue that keeps up drains to zero between
 * bursts), and the finding is there at every step from then on. Held on the `gradual-backlog` scenario, both
 * flavours, ten seeds, 45 minutes. Stated here and in docs/calibration.md, never read from the rule it judges: a
 * threshold or a `for` that delayed the finding breaks it. The test command holds the rules to it
 * (test/calibrate/gradual-backlog.test.ts), and so does `npm run calibrate:mutations` for a mutation the grids leave
 * green (a delay the truth's detection budget still allows, past the finding's own promise).
 */
import { memoizedBackend } from '../diagnosis/backend.js';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import { isFiring } from '../diagnosis/report.js';
import { EVALUATION_INTERVAL_MS, type RuleId } from '../diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { MINUTE_MS, signal } from '../diagnosis/signals.js';
import { LABEL } from '../metrics/names.js';
import { diagnoseSource } from '../service/diagnose-source.js';
import { type Flavor, runVirtual } from '../simulate/index.js';
import { recordingSourceFromText } from '../sources/recording-source.js';
import type { MetricsSource } from '../sources/source.js';

/**
 * How soon after the queue last drained a gradual backlog is reported: a ten-minute `for` (a backlog must outlast
 * the bursts a healthy queue absorbs in minutes), the few minutes the depth needs to stand clear of zero just past
 * capacity, and an evaluation step. On the ten seeds it comes 11 to 15 minutes after the last zero.
 */
export const GRADUAL_BACKLOG_PROMISE_MS = 16 * MINUTE_MS;
/** The rule the promise is about. */
export const GRADUAL_BACKLOG_RULE: RuleId = 'WorkqueueBacklog';
const SCENARIO = 'gradual-backlog';
/** The queue of the scenario that falls behind. */
const QUEUE = 'pod';
const DURATION_MS = 45 * MINUTE_MS;
export const GRADUAL_BACKLOG_SEEDS: readonly number[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
export const GRADUAL_BACKLOG_FLAVORS: readonly Flavor[] = ['controller-runtime', 'component-base'];

/** One simulated run of the promise, ready to be diagnosed under any overrides. Close it when done. */
export type GradualBacklogRun = {
  /** `gradual backlog promise, <flavor> seed <seed>`. */
  readonly name: string;
  readonly flavor: Flavor;
  readonly seed: number;
  /** Memoized: diagnosed again and again over data that no longer changes. */
  readonly source: MetricsSource;
  /** The last evaluation step (every half evaluation interval from the first minute) at which the depth was zero. */
  readonly lastDrainedMs: number;
  /** When the finding is due: `lastDrainedMs` + the promise. */
  readonly dueMs: number;
  readonly startMs: number;
  readonly endMs: number;
  close(): Promise<void>;
};

/** Simulates and loads the promise's run of `flavor` and `seed`. */
export async function gradualBacklogRun(flavor: Flavor, seed: number): Promise<GradualBacklogRun> {
  const name = `gradual backlog promise, ${flavor} seed ${seed}`;
  const run = await runVirtual(SCENARIO, { seed, flavor, durationMs: DURATION_MS });
  const loaded = recordingSourceFromText(run.recording.text(), `${SCENARIO}-${flavor}-${seed}.om`);
  const range = loaded.dataRange();
  if (range === undefined) throw new Error(`${name}: empty recording`);
  const backend = memoizedBackend(loaded.backend);
  const times: number[] = [];
  for (let t = range.startMs + MINUTE_MS; t <= range.endMs; t += EVALUATION_INTERVAL_MS / 2) times.push(t);
  const depths = await backend.evaluate(signal('depth').expr, times);
  const depthAt = (i: number) => depths[i]?.find((sample) => sample.labels[LABEL.name] === QUEUE)?.value ?? 0;
  const lastDrainedMs = times.filter((_, i) => depthAt(i) === 0).at(-1) ?? range.startMs;
  return {
    name,
    flavor,
    seed,
    source: { ...loaded, backend },
    lastDrainedMs,
    dueMs: lastDrainedMs + GRADUAL_BACKLOG_PROMISE_MS,
    startMs: range.startMs,
    endMs: range.endMs,
    close: () => loaded.close(),
  };
}

/** Every run of the promise: both flavours, ten seeds. */
export async function gradualBacklogRuns(): Promise<GradualBacklogRun[]> {
  const runs: GradualBacklogRun[] = [];
  for (const flavor of GRADUAL_BACKLOG_FLAVORS)
    for (const seed of GRADUAL_BACKLOG_SEEDS) runs.push(await gradualBacklogRun(flavor, seed));
  return runs;
}

/**
 * The evaluation steps from the due time on at which `run`'s queue has no firing Backlog finding (under `overrides`),
 * in seconds after it last drained; empty when the promise holds. Walks back from the end, one evaluation interval
 * at a time, and stops at the first step before the due time without the finding.
 */
export async function lateSteps(run: GradualBacklogRun, overrides?: RuleOverrides): Promise<number[]> {
  const late: number[] = [];
  for (let at = run.endMs; at >= run.lastDrainedMs; at -= EVALUATION_INTERVAL_MS) {
    const report = await diagnoseSource(run.source, {
      atMs: at,
      runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL,
      ...(overrides === undefined ? {} : { overrides }),
    });
    const queue = report.queues.find((q) => q.queue.name === QUEUE);
    const found = queue?.findings.some((f) => f.rule === GRADUAL_BACKLOG_RULE && isFiring(f)) === true;
    if (!found && at >= run.dueMs) late.push(Math.round((at - run.lastDrainedMs) / 1000));
    if (!found && at < run.dueMs) break;
  }
  return late;
}
