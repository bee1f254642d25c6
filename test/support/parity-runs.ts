/**
 * The runs the parity tests diagnose (every simulator scenario, six of them again under component-base's metric
 * names, and the priority queue past its cardinality cap), and their recordings written as OpenMetrics files, the
 * form `promtool tsdb create-blocks-from openmetrics` and `importVictoriaMetrics` read.
 *
 * - `RUNS`: the runs, each named by the `instance` label its recording carries.
 * - `writeRecordings(dir)`: simulates every run and writes its recording to `dir`; the files by instance and the
 *   end of the recordings (every run starts at the same time and lasts as long).
 * - `byQueue(queues)`: a report's queues by target, name and controller, for comparing two reports.
 * - `expectSameVerdict(key, mine, theirs)`: one queue's status, findings with their `since`, and observations agree.
 * - `SHIPPED_RECORDINGS`: the signals the shipped recording rules record (the default configuration's), as Prometheus
 *   mode reads them; `signalRecordingRules()`: those rules alone, as a rules file (the alerts' parts, which read other
 *   rules' series, left out), for `startPrometheusWithRecordings`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import type { QueueReport } from '../../src/diagnosis/report.js';
import { EVALUATION_INTERVAL_MS } from '../../src/diagnosis/rule.js';
import { ruleAnalyses } from '../../src/generate/condition-analysis.js';
import { recordedSignals, recordingPlan } from '../../src/generate/recording-rules.js';
import type { RecordedSignal } from '../../src/prometheus/recorded-series.js';
import { formatDuration } from '../../src/promql/render.js';
import { runVirtual, SCENARIO_NAMES, type SimulationParams } from '../../src/simulate/index.js';
import { capPriorities } from './priority-cardinality-cap.js';

/** A run; `rewrite` turns its recording into what another queue would have exposed. */
export type Run = {
  readonly scenario: string;
  readonly instance: string;
  readonly params: Partial<SimulationParams>;
  readonly rewrite?: (recording: string, startSeconds: number) => string;
};

export const RUNS: readonly Run[] = [
  ...SCENARIO_NAMES.map((scenario) => ({ scenario, instance: `${scenario}:8080`, params: { seed: 11 } })),
  ...['backlog', 'persistent-failure', 'hot-loop-no-backoff', 'stuck-worker', 'requeue-after', 'transient-errors'].map(
    (scenario) => ({
      scenario,
      instance: `${scenario}-component-base:8080`,
      params: { seed: 12, flavor: 'component-base' as const },
    }),
  ),
  // The priority queue past its cardinality cap (from the second minute): per-priority views end on both sides.
  {
    scenario: 'starved-backlog',
    instance: 'starved-backlog-capped:8080',
    params: { seed: 13, queue: 'priority' },
    rewrite: (recording, startSeconds) => capPriorities(recording, startSeconds + 120),
  },
];

/** The target a run's queues belong to in a report. */
export function runTarget(instance: string): string {
  return `workqueue-doctor-sim/${instance}`;
}

export type Recordings = {
  /** OpenMetrics file by instance. */
  readonly files: ReadonlyMap<string, string>;
  /** The end of the recordings, ms. */
  readonly endMs: number;
};

export async function writeRecordings(dir: string, runs: readonly Run[] = RUNS): Promise<Recordings> {
  const files = new Map<string, string>();
  let endMs = 0;
  for (const run of runs) {
    const result = await runVirtual(run.scenario, run.params, { instance: run.instance });
    const file = join(dir, `${run.instance.replace(':', '_')}.om`);
    const text = result.recording.text();
    const startSeconds = Date.parse(result.truth.parameters.start) / 1000;
    writeFileSync(file, run.rewrite === undefined ? text : run.rewrite(text, startSeconds));
    files.set(run.instance, file);
    endMs = Date.parse(result.truth.parameters.start) + (run.params.durationMs ?? 30 * 60_000);
  }
  return { files, endMs };
}

export function byQueue(queues: readonly QueueReport[]): Map<string, QueueReport> {
  return new Map(queues.map((q) => [`${q.queue.target}|${q.queue.name}|${q.queue.controller}`, q]));
}

/** `theirs` gives `key` the verdict `mine` does: status, findings with their `since`, observations. */
export function expectSameVerdict(
  key: string,
  mine: QueueReport,
  theirs: QueueReport,
): { findings: number; observations: number } {
  expect(theirs.status, `${key} status`).toBe(mine.status);
  expect(
    theirs.findings.map((f) => [f.rule, f.since]),
    `${key} findings`,
  ).toEqual(mine.findings.map((f) => [f.rule, f.since]));
  expect(
    theirs.observations.map((o) => o.id),
    `${key} observations`,
  ).toEqual(mine.observations.map((o) => o.id));
  return { findings: mine.findings.length, observations: mine.observations.length };
}

const SHIPPED_PLAN = recordingPlan(ruleAnalyses());

export const SHIPPED_RECORDINGS: ReadonlyMap<string, RecordedSignal> = recordedSignals(SHIPPED_PLAN);

/** The shipped signal recording rules as one group evaluated at the service's interval, in YAML. */
export function signalRecordingRules(): string {
  const series = new Set([...SHIPPED_RECORDINGS.values()].map((r) => r.series));
  const rules = SHIPPED_PLAN.rules.filter((r) => series.has(r.record));
  return stringify({ groups: [{ name: 'signals', interval: formatDuration(EVALUATION_INTERVAL_MS), rules }] });
}
