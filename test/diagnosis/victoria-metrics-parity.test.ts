/**
 * Parity with VictoriaMetrics: the same recordings held by a real Prometheus and by a single-node VictoriaMetrics
 * and diagnosed through each (`diagnose --prometheus-url`, every signal and condition evaluated by the server)
 * give the same verdicts: the same queues, status, findings with the same `since`, and observations.
 *
 * Signal values differ by MetricsQL's semantics (see docs/diagnoses.md, "VictoriaMetrics"): each signal's
 * relative difference is measured over every queue and both times, printed, and held to its documented bound.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { Report } from '../../src/diagnosis/report.js';
import { createPrometheusClient } from '../../src/prometheus/prometheus-api.js';
import { detectDialect } from '../../src/prometheus/prometheus-backend.js';
import { createPrometheusSource } from '../../src/sources/prometheus-source.js';
import { byQueue, RUNS, runTarget, writeRecordings } from '../support/parity-runs.js';
import { importRecordings, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';
import { startVictoriaMetrics, type VictoriaMetricsHandle } from '../support/victoria-metrics.js';

const RUNBOOKS = 'https://runbooks.example/workqueue';

let prom: PrometheusHandle | undefined;
let vm: VictoriaMetricsHandle | undefined;
const work = mkdtempSync(join(tmpdir(), 'wqd-vm-parity-'));
let endMs = 0;

beforeAll(async () => {
  const recordings = await writeRecordings(work);
  endMs = recordings.endMs;
  const files = [...recordings.files.values()];
  [prom, vm] = await Promise.all([
    importRecordings(files).then((storagePath) => startPrometheus({ storagePath })),
    startVictoriaMetrics().then(async (started) => {
      await started.importOpenMetrics(files);
      return started;
    }),
  ]);
}, 240_000);

afterAll(async () => {
  await Promise.all([prom?.stop(), vm?.stop()]);
  removeTempDirs();
  rmSync(work, { recursive: true, force: true });
});

const reports = new Map<string, Promise<Report>>();
function via(server: 'prometheus' | 'victoria-metrics', atMs: number): Promise<Report> {
  const key = `${server}@${atMs}`;
  let report = reports.get(key);
  if (report === undefined) {
    const url = server === 'prometheus' ? prom!.url : vm!.url;
    // The engine detected (`auto`), as the service does by default.
    const source = createPrometheusSource({ url, timeoutMs: 60_000 });
    report = diagnose(source.backend, { atMs, runbookBaseUrl: RUNBOOKS });
    reports.set(key, report);
  }
  return report;
}

/** Per signal, the relative differences measured (both values present). */
const differences = new Map<string, number[]>();
/** Per signal, where the largest difference was measured. */
const worst = new Map<string, { difference: number; where: string }>();
/** Per signal, queue and time where one server had a value and the other none. */
const presence: string[] = [];
let comparedFindings = 0;
let comparedObservations = 0;

function relativeDifference(a: number, b: number): number {
  if (a === b) return 0;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return Number.POSITIVE_INFINITY;
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
}

describe('the engine', () => {
  it('is detected: MetricsQL on VictoriaMetrics, PromQL on Prometheus', async () => {
    const dialect = (url: string) => detectDialect(createPrometheusClient({ url, timeoutMs: 30_000 }));
    expect(await dialect(vm!.url)).toBe('metricsql');
    expect(await dialect(prom!.url)).toBe('promql');
  });
});

describe('diagnose --prometheus-url on Prometheus and on VictoriaMetrics agree', () => {
  // As parity.test.ts: the end of the recordings, and a time off the scrape grid seven minutes earlier.
  const times = () => [endMs, endMs - 7 * 60_000 + 3_500];

  it.each(RUNS.map((r) => [r.instance]))('%s', { timeout: 180_000 }, async (instance) => {
    for (const atMs of times()) {
      const [fromProm, fromVm] = await Promise.all([via('prometheus', atMs), via('victoria-metrics', atMs)]);
      const target = runTarget(instance);
      const promQueues = byQueue(fromProm.queues.filter((q) => q.queue.target === target));
      const vmQueues = byQueue(fromVm.queues.filter((q) => q.queue.target === target));
      expect([...vmQueues.keys()].sort(), `queues at ${atMs}`).toEqual([...promQueues.keys()].sort());
      expect(promQueues.size).toBeGreaterThan(0);
      for (const [key, mine] of promQueues) {
        const theirs = vmQueues.get(key)!;
        expect(theirs.status, `${key} status`).toBe(mine.status);
        expect(
          theirs.findings.map((f) => [f.rule, f.since]),
          `${key} findings`,
        ).toEqual(mine.findings.map((f) => [f.rule, f.since]));
        comparedFindings += mine.findings.length;
        expect(
          theirs.observations.map((o) => o.id),
          `${key} observations`,
        ).toEqual(mine.observations.map((o) => o.id));
        comparedObservations += mine.observations.length;
        expect(Object.keys(theirs.signals).sort()).toEqual(Object.keys(mine.signals).sort());
        for (const [id, value] of Object.entries(mine.signals)) {
          const other = theirs.signals[id]!;
          if ((value.value === null) !== (other.value === null)) {
            presence.push(`${key} ${id} at ${atMs}: ${value.value} vs ${other.value}`);
            continue;
          }
          if (value.value === null || other.value === null) continue;
          const list = differences.get(id) ?? [];
          const difference = relativeDifference(value.value, other.value);
          list.push(difference);
          differences.set(id, list);
          if (difference > (worst.get(id)?.difference ?? 0))
            worst.set(id, {
              difference,
              where: `${key} at ${new Date(atMs).toISOString()}: ${value.value} vs ${other.value}`,
            });
        }
      }
    }
  });

  it('measured every signal', () => {
    const rows = [...differences.entries()]
      .map(([id, list]) => {
        const sorted = [...list].sort((a, b) => a - b);
        return {
          id,
          n: sorted.length,
          median: sorted[Math.floor(sorted.length / 2)]!,
          max: sorted[sorted.length - 1]!,
        };
      })
      .sort((a, b) => a.id.localeCompare(b.id));
    console.log(
      rows
        .map(
          (r) =>
            `${r.id}\t${r.n}\t${r.median.toExponential(2)}\t${r.max.toExponential(2)}\t${worst.get(r.id)?.where ?? ''}`,
        )
        .join('\n'),
    );
    console.log(presence.join('\n'));
    expect(comparedFindings).toBeGreaterThanOrEqual(20);
    expect(comparedObservations).toBeGreaterThanOrEqual(3);
  });
});
