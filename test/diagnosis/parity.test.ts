/**
 * Parity: the same recording diagnosed in-process (`diagnose --recording`) and by a real Prometheus holding
 * it (`diagnose --prometheus-url`, every signal evaluated by the server from its PromQL, and every condition too,
 * or, over a few steps, computed from those signals) gives
 * the same queues, the same findings with the same `since`, the same observations, and the same signal values
 * (those the observations read included).
 *
 * The Prometheus also holds the series the shipped signal recording rules record, evaluated over the recordings by
 * `promtool tsdb create-blocks-from rules` at the service's interval, as a Prometheus loading the rules file holds
 * them. Read in place of the raw series (`prometheus.recordedSeries: auto`), they give the same verdicts and values
 * at the rule evaluations' times; where an evaluation reaches back before the recorded series begin, it falls
 * back to the raw ones.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiagnosisBackend } from '../../src/diagnosis/backend.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { EvaluationMemory } from '../../src/diagnosis/holding.js';
import type { Report } from '../../src/diagnosis/report.js';
import { EVALUATION_INTERVAL_MS } from '../../src/diagnosis/rule.js';
import { ruleAnalyses } from '../../src/generate/condition-analysis.js';
import { planLocalConditions } from '../../src/prometheus/local-conditions.js';
import { createPrometheusClient, type PrometheusClient } from '../../src/prometheus/prometheus-api.js';
import { createPrometheusBackend } from '../../src/prometheus/prometheus-backend.js';
import type { InstantVector } from '../../src/promql/vector.js';
import { createPrometheusSource } from '../../src/sources/prometheus-source.js';
import { openRecordingSource } from '../../src/sources/recording-source.js';
import {
  byQueue,
  expectSameVerdict,
  RUNS,
  runTarget,
  SHIPPED_RECORDINGS,
  signalRecordingRules,
  writeRecordings,
} from '../support/parity-runs.js';
import {
  importRecordings,
  type PrometheusHandle,
  removeTempDirs,
  startPrometheusWithRecordings,
} from '../support/prometheus.js';

const RUNBOOKS = 'https://runbooks.example/workqueue';

let prom: PrometheusHandle;
const work = mkdtempSync(join(tmpdir(), 'wqd-parity-'));
let files: ReadonlyMap<string, string> = new Map();
let endMs = 0;

beforeAll(async () => {
  ({ files, endMs } = await writeRecordings(work));
  const storage = await importRecordings([...files.values()]);
  prom = await startPrometheusWithRecordings(
    storage,
    signalRecordingRules(),
    (endMs - 30 * 60_000) / 1000,
    endMs / 1000,
  );
}, 240_000);

afterAll(async () => {
  await prom?.stop();
  removeTempDirs();
  rmSync(work, { recursive: true, force: true });
});

async function inProcess(instance: string, atMs: number): Promise<Report> {
  const source = await openRecordingSource(files.get(instance)!);
  return diagnose(source.backend, { atMs, runbookBaseUrl: RUNBOOKS, targets: source.targets() });
}

/** Findings compared, so the suite cannot pass by comparing empty reports. */
let comparedFindings = 0;
let comparedObservations = 0;
let comparedValues = 0;

let prometheusReports = new Map<number, Promise<Report>>();
function viaPrometheus(atMs: number): Promise<Report> {
  let report = prometheusReports.get(atMs);
  if (report === undefined) {
    const source = createPrometheusSource({ url: prom.url, timeoutMs: 60_000 });
    report = diagnose(source.backend, { atMs, runbookBaseUrl: RUNBOOKS });
    prometheusReports.set(atMs, report);
  }
  return report;
}

/** What a client asked: the text of every query, and how many evaluation times they covered in all. */
type Asked = { readonly queries: string[]; times: number };

/** A client that keeps what it is asked. */
function recordingQueries(client: PrometheusClient, asked: Asked): PrometheusClient {
  return {
    ...client,
    query: (expr, ...rest) => {
      asked.queries.push(expr);
      asked.times += 1;
      return client.query(expr, ...rest);
    },
    queryRange: (expr, startSec, endSec, stepSec, request) => {
      asked.queries.push(expr);
      asked.times += Math.round((endSec - startSec) / stepSec) + 1;
      return client.queryRange(expr, startSec, endSec, stepSec, request);
    },
  };
}

/**
 * The diagnosis through Prometheus with the recorded series read where it holds them, the queries it sent, and the
 * phase of its grid (the rule group's).
 */
async function viaRecordedSeries(atMs: number): Promise<{ report: Report; queries: string[]; phase: number }> {
  const asked: Asked = { queries: [], times: 0 };
  const backend = recordedSeriesBackend(asked);
  const phase = (await backend.gridPhase?.(EVALUATION_INTERVAL_MS, atMs)) ?? Number.NaN;
  return { report: await diagnose(backend, { atMs, runbookBaseUrl: RUNBOOKS }), queries: asked.queries, phase };
}

/** Prometheus mode as the service runs it: recorded series where they are, steps kept between evaluations. */
function recordedSeriesBackend(asked: Asked): DiagnosisBackend {
  const client = recordingQueries(createPrometheusClient({ url: prom.url, timeoutMs: 60_000 }), asked);
  return createPrometheusBackend(client, {
    targetName: 'prometheus',
    recorded: { mode: 'auto', signals: SHIPPED_RECORDINGS },
    maxSampleDelayMs: 120_000,
  });
}

/** The diagnosis through Prometheus from the raw series alone, on the grid offset by `phase`. */
function viaRawSeriesOnGrid(atMs: number, phase: number): Promise<Report> {
  const { backend } = createPrometheusSource({ url: prom.url, timeoutMs: 60_000 });
  return diagnose({ ...backend, gridPhase: async () => phase }, { atMs, runbookBaseUrl: RUNBOOKS });
}

function expectSameValue(a: number | null, b: number | null, where: string): void {
  if (a === null || b === null) {
    expect(a, where).toBe(b);
    return;
  }
  const scale = Math.max(Math.abs(a), Math.abs(b), 1e-12);
  expect(Math.abs(a - b) / scale, `${where}: ${a} vs ${b}`).toBeLessThanOrEqual(1e-9);
}

describe('diagnose --recording and --prometheus-url agree', () => {
  // The end of the recordings, and a time off the scrape grid seven minutes earlier.
  const times = () => [endMs, endMs - 7 * 60_000 + 3_500];

  it.each(RUNS.map((r) => [r.instance]))('%s', { timeout: 180_000 }, async (instance) => {
    prometheusReports = prometheusReports.size > 4 ? new Map() : prometheusReports;
    for (const atMs of times()) {
      const local = await inProcess(instance, atMs);
      const remote = await viaPrometheus(atMs);
      const target = runTarget(instance);
      const localQueues = byQueue(local.queues.filter((q) => q.queue.target === target));
      const remoteQueues = byQueue(remote.queues.filter((q) => q.queue.target === target));
      expect([...remoteQueues.keys()].sort(), `queues at ${atMs}`).toEqual([...localQueues.keys()].sort());
      expect(localQueues.size).toBeGreaterThan(0);
      for (const [key, mine] of localQueues) {
        const theirs = remoteQueues.get(key)!;
        const compared = expectSameVerdict(key, mine, theirs);
        comparedFindings += compared.findings;
        comparedObservations += compared.observations;
        if (instance.endsWith('-capped:8080')) {
          expect(
            mine.observations.map((o) => o.id),
            `${key} past the cap`,
          ).toContain('PriorityDepthUnknown');
        }
        expect(Object.keys(theirs.signals).sort()).toEqual(Object.keys(mine.signals).sort());
        for (const [id, value] of Object.entries(mine.signals)) {
          const other = theirs.signals[id]!;
          expectSameValue(value.value, other.value, `${key} ${id}`);
          if (value.value !== null) comparedValues++;
          expect(other.bound, `${key} ${id} bound`).toBe(value.bound);
          expect(other.missing, `${key} ${id} missing`).toBe(value.missing);
        }
      }
    }
  });

  it('compared real findings and values', () => {
    expect(comparedFindings).toBeGreaterThanOrEqual(20);
    expect(comparedObservations).toBeGreaterThanOrEqual(3);
    expect(comparedValues).toBeGreaterThanOrEqual(500);
  });
});

describe('the recorded series read in place of the raw ones give the same verdicts and values', () => {
  const recordedNames = new Set([...SHIPPED_RECORDINGS.values()].map((r) => r.series));
  const read = new Set<string>();

  // At the rule group's evaluation times (Prometheus offsets a group's evaluations from the interval's multiples by
  // a phase of its own, which the engine's grid follows): the last before the end, while findings hold, and 22
  // minutes before, when every `for` and `since` reaches back before the recorded series begin (there the raw
  // series are read). The raw series are read on the same grid. Blocks backfilled by promtool carry no stale
  // markers (a Prometheus evaluating the rules writes one when a rule's series goes away), so a series that ends
  // (the capped queue's per-priority views, at its second minute) is read for the 5 minutes of lookback after:
  // the times lie later.
  it.each([0, 8, 22])('%i minutes before the end', { timeout: 180_000 }, async (minutes) => {
    const [last] = await prom.query('timestamp(queue:workqueue_depth:sum)', endMs / 1000);
    const lastMs = Math.round(last!.value * 1000);
    const atMs = lastMs - minutes * 60_000;
    const recorded = await viaRecordedSeries(atMs);
    expect(recorded.phase).toBe(lastMs % EVALUATION_INTERVAL_MS);
    const raw = await viaRawSeriesOnGrid(atMs, recorded.phase);
    for (const query of recorded.queries) {
      for (const name of query.match(/[a-z]+:[a-z0-9_]+:[a-z0-9_]+/g) ?? [])
        if (recordedNames.has(name)) read.add(name);
    }
    const mine = byQueue(raw.queues);
    const theirs = byQueue(recorded.report.queues);
    expect([...theirs.keys()].sort()).toEqual([...mine.keys()].sort());
    expect(mine.size).toBeGreaterThanOrEqual(RUNS.length);
    for (const [key, queue] of mine) {
      const other = theirs.get(key)!;
      expectSameVerdict(key, queue, other);
      for (const [id, value] of Object.entries(queue.signals)) {
        expectSameValue(value.value, other.signals[id]?.value ?? null, `${key} ${id}`);
      }
    }
  });

  // The recordings lie in the past, so every step before an evaluation is final: a service evaluating every 30 s
  // keeps them and asks for the new ones only, and gives the verdicts and values of one evaluation from scratch.
  it('successive evaluations with the steps kept give the verdicts of one from scratch', {
    timeout: 180_000,
  }, async () => {
    const [last] = await prom.query('timestamp(queue:workqueue_depth:sum)', endMs / 1000);
    const atMs = Math.round(last!.value * 1000) - 8 * 60_000;
    const memory = new EvaluationMemory();
    const asked: Asked = { queries: [], times: 0 };
    const backend = recordedSeriesBackend(asked);
    let report: Report | undefined;
    const timesAsked: number[] = [];
    for (const t of [atMs - 90_000, atMs - 60_000, atMs - 30_000, atMs]) {
      asked.times = 0;
      report = await diagnose(backend, { atMs: t, runbookBaseUrl: RUNBOOKS, memory });
      timesAsked.push(asked.times);
    }
    const fresh = await viaRecordedSeries(atMs);
    const mine = byQueue(fresh.report.queues);
    const theirs = byQueue(report!.queues);
    expect([...theirs.keys()].sort()).toEqual([...mine.keys()].sort());
    for (const [key, queue] of mine) {
      const other = theirs.get(key)!;
      expectSameVerdict(key, queue, other);
      for (const [id, value] of Object.entries(queue.signals)) {
        expectSameValue(value.value, other.signals[id]?.value ?? null, `${key} ${id}`);
      }
    }
    // The later evaluations ask for a fraction of the times the first one does.
    for (const later of timesAsked.slice(1)) expect(later).toBeLessThan(timesAsked[0]! / 3);
  });

  it('read every recorded signal that has series', async () => {
    const present = await prom.query(
      `count by (__name__) ({__name__=~"${[...recordedNames].join('|')}"})`,
      endMs / 1000,
    );
    expect(present.length).toBeGreaterThanOrEqual(30);
    expect([...read].sort()).toEqual(present.map((s) => s.labels.__name__).sort());
  });
});

// The service's later evaluations compute the conditions here from the signals the server answers
// (local-conditions.ts); the server computing each condition whole must give the same vectors.
describe('conditions computed from the signals give what the server computes', () => {
  const conditions = ruleAnalyses().map((a) => ({ id: a.settings.rule.id, expr: a.condition }));

  it('reads nothing but signals in every queue rule', () => {
    const plan = planLocalConditions(conditions.map((c) => c.expr));
    const local = conditions.filter((_, i) => plan.local[i]).map((c) => c.id);
    expect(local).toEqual(
      expect.arrayContaining([
        'WorkqueueBacklog',
        'WorkqueueHotLoop',
        'WorkqueueSaturated',
        'WorkqueueSlowWork',
        'WorkqueueStuckWorker',
        'WorkqueuePersistentFailures',
      ]),
    );
  });

  it.each([
    ['the raw series', 'off'],
    ['the recorded series', 'auto'],
  ] as const)('over %s, at three steps', { timeout: 120_000 }, async (_, mode) => {
    const backend = createPrometheusBackend(createPrometheusClient({ url: prom.url, timeoutMs: 60_000 }), {
      targetName: 'prometheus',
      recorded: { mode, signals: SHIPPED_RECORDINGS },
    });
    let holding = 0;
    for (const atMs of [endMs - 20 * 60_000, endMs - 5 * 60_000, endMs]) {
      const times = [atMs - 60_000, atMs - 30_000, atMs];
      const local = await backend.evaluateBatch!(
        conditions.map((c) => c.expr),
        times,
      );
      for (const [i, condition] of conditions.entries()) {
        const whole = await backend.evaluate(condition.expr, times);
        times.forEach((t, j) => {
          const key = (v: InstantVector) =>
            v.map((s) => `${JSON.stringify(Object.entries(s.labels).sort())} ${s.value}`).sort();
          expect(key(local[i]?.[j] ?? []), `${condition.id} at ${t}`).toEqual(key(whole[j] ?? []));
          holding += whole[j]?.length ?? 0;
        });
      }
    }
    // Some conditions hold somewhere, so the comparison is not of empty vectors only.
    expect(holding).toBeGreaterThan(0);
  });
});
