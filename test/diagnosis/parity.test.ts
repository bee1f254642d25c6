/**
 * Parity: the same recording diagnosed in-process (`diagnose --recording`) and by a real Prometheus holding
 * it (`diagnose --prometheus-url`, every signal and condition evaluated by the server from its PromQL) gives
 * the same queues, the same findings with the same `since`, the same observations, and the same signal values
 * (those the observations read included).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { Report } from '../../src/diagnosis/report.js';
import { createPrometheusSource } from '../../src/sources/prometheus-source.js';
import { openRecordingSource } from '../../src/sources/recording-source.js';
import { byQueue, expectSameVerdict, RUNS, runTarget, writeRecordings } from '../support/parity-runs.js';
import { importRecordings, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';

const RUNBOOKS = 'https://runbooks.example/workqueue';

let prom: PrometheusHandle;
const work = mkdtempSync(join(tmpdir(), 'wqd-parity-'));
let files: ReadonlyMap<string, string> = new Map();
let endMs = 0;

beforeAll(async () => {
  ({ files, endMs } = await writeRecordings(work));
  prom = await startPrometheus({ storagePath: await importRecordings([...files.values()]) });
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
