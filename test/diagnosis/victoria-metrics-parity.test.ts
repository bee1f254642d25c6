/**
 * Parity with VictoriaMetrics: the same recordings held by a real Prometheus and by a single-node VictoriaMetrics
 * and diagnosed through each (`diagnose --prometheus-url`, every signal and condition evaluated by the server, the
 * engine detected as the service does by default) give the same verdicts: the same queues, status, findings with
 * the same `since`, and observations, at the end of the recordings, seven minutes earlier, and eight minutes after
 * their start (while the long windows are still filling: the time MetricsQL's own `rate` judged differently).
 *
 * Signal values differ by MetricsQL's semantics (docs/commands.md, "VictoriaMetrics"): each signal's relative
 * difference is measured over every queue and time, printed, and held to the bound its kind allows:
 * - signals over the same samples (gauges, `*_over_time`, `deriv`): equal but for float rounding;
 * - signals over rates: MetricsQL's window reaches back to the sample before it and is not extrapolated, so the two
 *   read the same events but for one scrape interval at the window's start: the median difference stays within
 *   that interval's share of the window (5% at 5 minutes, 1.7% at 15), and no value is zero or absent on one side
 *   only (the largest differences, a burst inside that one interval, stay below 1);
 * - a histogram quantile whose rank sits at the edge of the `+Inf` bucket may be a lower bound on one side only, the
 *   other side's value inside the top finite bucket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { Report } from '../../src/diagnosis/report.js';
import { SIGNAL_BY_ID } from '../../src/diagnosis/signals.js';
import { createPrometheusClient } from '../../src/prometheus/prometheus-api.js';
import { detectDialect } from '../../src/prometheus/prometheus-backend.js';
import type { Expr } from '../../src/promql/expr.js';
import { DEFAULT_SCRAPE_INTERVAL_MS } from '../../src/simulate/index.js';
import { createPrometheusSource } from '../../src/sources/prometheus-source.js';
import {
  byQueue,
  expectSameVerdict,
  RUNS,
  runTarget,
  SHIPPED_RECORDINGS,
  writeRecordings,
} from '../support/parity-runs.js';
import { importRecordings, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';
import { startVictoriaMetrics, type VictoriaMetricsHandle } from '../support/victoria-metrics.js';

const RUNBOOKS = 'https://runbooks.example/workqueue';

let prom: PrometheusHandle | undefined;
let vm: VictoriaMetricsHandle | undefined;
const work = mkdtempSync(join(tmpdir(), 'wqd-vm-parity-'));
let endMs = 0;

beforeAll(async () => {
  const started = performance.now();
  const recordings = await writeRecordings(work);
  const simulated = performance.now();
  endMs = recordings.endMs;
  const files = [...recordings.files.values()];
  [prom, vm] = await Promise.all([
    importRecordings(files).then((storagePath) => startPrometheus({ storagePath })),
    startVictoriaMetrics().then(async (started) => {
      await started.importOpenMetrics(files);
      return started;
    }),
  ]);
  console.log(
    `simulated in ${((simulated - started) / 1000).toFixed(1)} s; both servers ready in ${((performance.now() - simulated) / 1000).toFixed(1)} s`,
  );
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
    // The engine detected and the recorded series looked for (`auto`; neither server holds them), as the service
    // does by default.
    const source = createPrometheusSource(
      { url, timeoutMs: 60_000 },
      { recorded: { mode: 'auto', signals: SHIPPED_RECORDINGS } },
    );
    report = diagnose(source.backend, { atMs, runbookBaseUrl: RUNBOOKS });
    reports.set(key, report);
  }
  return report;
}

/** Per signal, the relative differences measured (both values present). */
const differences = new Map<string, number[]>();
/** Quantiles a lower bound on one server only (see where they are collected). */
const atTopBucketEdge: string[] = [];
/** Per signal, the largest absolute difference. */
const largestAbsolute = new Map<string, number>();
/** Per signal, where the largest difference was measured. */
const worst = new Map<string, { difference: number; where: string }>();
/** Per signal, queue and time where one server had a value and the other none. */
const presence: string[] = [];
let comparedFindings = 0;
let comparedObservations = 0;

/**
 * |a − b| / max(|a|, |b|), values under 1e-9 counted as 1e-9: a difference of two equal rates (the unexplained
 * error rate, errors less the conflicts charged) is 0 on one server and 1e-17 of float rounding on the other.
 */
const NOISE_FLOOR = 1e-9;
function relativeDifference(a: number, b: number): number {
  if (a === b) return 0;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return Number.POSITIVE_INFINITY;
  return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), NOISE_FLOOR);
}

/**
 * The windows of the `rate`s, `increase`s and `delta`s a signal reads (each from the samples at the window's edges,
 * which Prometheus extrapolates to them and MetricsQL does not); none for a signal over gauges alone.
 */
function rateWindows(expr: Expr): number[] {
  switch (expr.kind) {
    case 'range':
      return ['rate', 'increase', 'delta'].includes(expr.fn) ? [expr.windowMs] : [];
    case 'aggregate':
    case 'histogram_quantile':
    case 'clamp_min':
    case 'signal':
    case 'subquery':
      return rateWindows(expr.expr);
    case 'binary':
      return [...rateWindows(expr.lhs), ...rateWindows(expr.rhs)];
    default:
      return [];
  }
}

/** Whether a signal reads a difference clamped at zero (errors less the conflicts charged). */
function clampsDifference(expr: Expr): boolean {
  switch (expr.kind) {
    case 'clamp_min':
      return true;
    case 'aggregate':
    case 'histogram_quantile':
    case 'signal':
      return clampsDifference(expr.expr);
    case 'binary':
      return clampsDifference(expr.lhs) || clampsDifference(expr.rhs);
    default:
      return false;
  }
}

/** `max`: the largest relative difference allowed; `zeroOnOneSide`: whether it may reach 1 (a value 0 on one side). */
type Bound = { readonly median: number; readonly max: number; readonly zeroOnOneSide: boolean; readonly why: string };
/** The bound of a signal's differences, from what it reads (see the file's comment). */
function boundOf(id: string): Bound {
  const expr = SIGNAL_BY_ID.get(id)!.expr;
  const windows = rateWindows(expr);
  if (windows.length === 0) return { median: 1e-9, max: 1e-9, zeroOnOneSide: false, why: 'same samples' };
  const window = Math.min(...windows);
  const share = DEFAULT_SCRAPE_INTERVAL_MS / window;
  const over = `one scrape interval of ${window / 60_000} min`;
  // Errors less the conflicts charged, clamped at 0: where conflicts explain every error, the remainder is 0 on one
  // server and a small positive one on the other, a relative difference of 1 however small the remainder.
  if (clampsDifference(expr)) return { median: share, max: 1, zeroOnOneSide: true, why: `rate difference, ${over}` };
  return { median: share, max: 1, zeroOnOneSide: false, why: `rate, ${over}` };
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
  const times = () => [endMs, endMs - 7 * 60_000 + 3_500, endMs - 22 * 60_000 + 3_500];

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
        const compared = expectSameVerdict(key, mine, theirs);
        comparedFindings += compared.findings;
        comparedObservations += compared.observations;
        expect(Object.keys(theirs.signals).sort()).toEqual(Object.keys(mine.signals).sort());
        for (const [id, value] of Object.entries(mine.signals)) {
          const other = theirs.signals[id]!;
          expect(other.missing, `${key} ${id} missing`).toBe(value.missing);
          if (other.bound !== value.bound) {
            // A quantile's rank at the edge of the +Inf bucket: one server's rates put it above the highest finite
            // bucket (the quantile is that bucket's bound, a lower bound), the other's just inside that bucket.
            expect(SIGNAL_BY_ID.get(id)?.quantileOf, `${key} ${id} bound`).toBeDefined();
            const [above, inside] = value.bound === 'ge' ? [value, other] : [other, value];
            expect(above.bound, `${key} ${id} bound`).toBe('ge');
            expect(inside.value!, `${key} ${id} inside the top bucket`).toBeLessThanOrEqual(above.value!);
            atTopBucketEdge.push(`${key} ${id} at ${new Date(atMs).toISOString()}: ${value.value} vs ${other.value}`);
          }
          if ((value.value === null) !== (other.value === null)) {
            presence.push(`${key} ${id} at ${atMs}: ${value.value} vs ${other.value}`);
            continue;
          }
          if (value.value === null || other.value === null) continue;
          const list = differences.get(id) ?? [];
          const difference = relativeDifference(value.value, other.value);
          list.push(difference);
          largestAbsolute.set(id, Math.max(largestAbsolute.get(id) ?? 0, Math.abs(value.value - other.value)));
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

  it('measured every signal, each within its bound', () => {
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
      [
        'signal\tn\tmedian\tmax\tmax |a-b|\tbound (median, max)\tlargest at',
        ...rows.map((r) => {
          const bound = boundOf(r.id);
          const at = r.max > 0 ? (worst.get(r.id)?.where ?? '') : '';
          return `${r.id}\t${r.n}\t${r.median.toExponential(2)}\t${r.max.toExponential(2)}\t${(largestAbsolute.get(r.id) ?? 0).toExponential(2)}\t${bound.why}: ${bound.median.toExponential(1)}, ${bound.max}\t${at}`;
        }),
      ].join('\n'),
    );
    console.log(`a lower bound on one server only (${atTopBucketEdge.length}):\n${atTopBucketEdge.join('\n')}`);
    expect(presence, 'values present on one server only').toEqual([]);
    for (const r of rows) {
      const bound = boundOf(r.id);
      expect(r.median, `${r.id} median (${bound.why})`).toBeLessThanOrEqual(bound.median);
      // A rate zero on one side only is a relative difference of 1.
      if (bound.zeroOnOneSide || bound.max < 1)
        expect(r.max, `${r.id} max (${bound.why})`).toBeLessThanOrEqual(bound.max);
      else expect(r.max, `${r.id} max (${bound.why})`).toBeLessThan(bound.max);
    }
    // Every reported signal measured on queues where it has a value on both.
    expect(rows.length).toBeGreaterThanOrEqual(50);
    expect(comparedFindings).toBeGreaterThanOrEqual(30);
    expect(comparedObservations).toBeGreaterThanOrEqual(3);
  });
});
