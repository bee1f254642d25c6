/**
 * Parity with a real Prometheus 2.42: a generated recording imported with promtool, queried over
 * the HTTP API, and the same expressions computed over the history read from the same file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Labels } from '../../src/exposition/labels.js';
import { LABEL, SUFFIX, WORKQUEUE } from '../../src/metrics/names.js';
import {
  aggregateBy,
  histogramQuantile as quantileOf,
  quantileOverSubquery,
  rangeFn,
  subquery,
  sumWithout,
} from '../../src/promql/expr.js';
import { histogramQuantile, type RangeFunctionName, type VectorSample } from '../../src/promql/functions.js';
import { renderPromQL } from '../../src/promql/render.js';
import type { History } from '../../src/store/history.js';
import { readRecording } from '../../src/store/recording.js';
import { parseDuration } from '../../src/util/duration.js';
import { evaluateOver, rangeOver } from '../support/history-range.js';
import {
  formatTimeSec,
  importRecording,
  type PrometheusHandle,
  requireTool,
  startPrometheus,
} from '../support/prometheus.js';
import { generateRecording, type RecordingSpec } from '../support/recordings.js';
import { WHOLE_DEPTH } from '../support/whole-depth.js';

const START = 1_700_000_000;
const SPEC: RecordingSpec = {
  startSec: START,
  intervalSec: 15,
  steps: 160,
  targets: [
    {
      job: 'ctrl',
      instance: 'a:8080',
      queues: [
        { name: 'alpha', controller: 'alpha', addsPerSecond: 30 },
        { name: 'beta', addsPerSecond: 5, workSeconds: 1.5 },
      ],
      resetAtStep: 60,
      gap: { fromStep: 90, toStep: 100 },
      seed: 3,
    },
    {
      job: 'ctrl',
      instance: 'b:8080',
      queues: [{ name: 'gamma', controller: 'gamma', addsPerSecond: 12, workSeconds: 0.2 }],
      resetAtStep: 40,
      gap: { fromStep: 110, toStep: 132 },
      jitterMs: 900,
      seed: 5,
    },
  ],
};

const BUCKET = (family: string): string => `${family}${SUFFIX.bucket}`;

/** A PromQL expression and the same computation over the history. */
interface Case {
  readonly expr: (w: string) => string;
  readonly local: (h: History, atMs: number, windowMs: number) => readonly VectorSample[];
}

const range =
  (fn: RangeFunctionName, metric: string) =>
  (h: History, atMs: number, windowMs: number): VectorSample[] =>
    rangeOver(h, fn, metric, [], atMs, windowMs).samples;

/**
 * `deriv((WHOLE_DEPTH)[w:step])` as the service writes it (a millisecond shorter: its window is open at the start),
 * with steps on the samples' 15 s grid, and off it.
 */
const subqueryCase = (stepMs: number): Case => ({
  expr: (w) =>
    w === 'W'
      ? `deriv((whole depth)[W:${stepMs / 1000}s])`
      : renderPromQL(subquery('deriv', WHOLE_DEPTH, parseDuration(w), stepMs)),
  local: (h, t, w) => evaluateOver(h, subquery('deriv', WHOLE_DEPTH, w, stepMs), t),
});

/** `quantile_over_time(0.5, (rate(adds[2m]))[w:1m])`, the median rate, as the service writes it. */
const medianRateCase: Case = {
  expr: (w) =>
    w === 'W'
      ? 'quantile_over_time(0.5, (rate(adds[2m]))[W:1m])'
      : renderPromQL(quantileOverSubquery(0.5, rangeFn('rate', WORKQUEUE.adds, 120_000), parseDuration(w), 60_000)),
  local: (h, t, w) =>
    evaluateOver(h, quantileOverSubquery(0.5, rangeFn('rate', WORKQUEUE.adds, 120_000), w, 60_000), t),
};

const CASES: readonly Case[] = [
  subqueryCase(15_000),
  subqueryCase(7_000),
  medianRateCase,
  { expr: (w) => `rate(${WORKQUEUE.adds}[${w}])`, local: range('rate', WORKQUEUE.adds) },
  { expr: (w) => `increase(${WORKQUEUE.retries}[${w}])`, local: range('increase', WORKQUEUE.retries) },
  {
    expr: (w) => `rate(${BUCKET(WORKQUEUE.workDuration)}[${w}])`,
    local: range('rate', BUCKET(WORKQUEUE.workDuration)),
  },
  { expr: (w) => `deriv(${WORKQUEUE.depth}[${w}])`, local: range('deriv', WORKQUEUE.depth) },
  { expr: (w) => `delta(${WORKQUEUE.depth}[${w}])`, local: range('delta', WORKQUEUE.depth) },
  {
    expr: (w) => `avg_over_time(${WORKQUEUE.longestRunningProcessor}[${w}])`,
    local: range('avg_over_time', WORKQUEUE.longestRunningProcessor),
  },
  { expr: (w) => `max_over_time(${WORKQUEUE.depth}[${w}])`, local: range('max_over_time', WORKQUEUE.depth) },
  {
    expr: (w) => `min_over_time(${WORKQUEUE.unfinishedWork}[${w}])`,
    local: range('min_over_time', WORKQUEUE.unfinishedWork),
  },
  {
    expr: (w) => `histogram_quantile(0.9, rate(${BUCKET(WORKQUEUE.workDuration)}[${w}]))`,
    local: (h, t, w) => histogramQuantile(0.9, rangeOver(h, 'rate', BUCKET(WORKQUEUE.workDuration), [], t, w).samples),
  },
  {
    expr: (w) => `histogram_quantile(0.99, sum by (le) (rate(${BUCKET(WORKQUEUE.queueDuration)}[${w}])))`,
    local: (h, t, w) =>
      evaluateOver(
        h,
        quantileOf(0.99, aggregateBy('sum', [LABEL.le], rangeFn('rate', BUCKET(WORKQUEUE.queueDuration), w))),
        t,
      ),
  },
  {
    expr: (w) => `histogram_quantile(0.5, sum by (le, name) (rate(${BUCKET(WORKQUEUE.workDuration)}[${w}])))`,
    local: (h, t, w) =>
      evaluateOver(
        h,
        quantileOf(0.5, aggregateBy('sum', [LABEL.le, LABEL.name], rangeFn('rate', BUCKET(WORKQUEUE.workDuration), w))),
        t,
      ),
  },
  {
    expr: (w) => `sum without (instance) (increase(${BUCKET(WORKQUEUE.queueDuration)}[${w}]))`,
    local: (h, t, w) =>
      evaluateOver(h, sumWithout([LABEL.instance], rangeFn('increase', BUCKET(WORKQUEUE.queueDuration), w)), t),
  },
  {
    expr: (w) => `histogram_quantile(0.99, sum by (le, name) (rate(${BUCKET(WORKQUEUE.queueDuration)}[${w}])))`,
    local: (h, t, w) =>
      evaluateOver(
        h,
        quantileOf(
          0.99,
          aggregateBy('sum', [LABEL.le, LABEL.name], rangeFn('rate', BUCKET(WORKQUEUE.queueDuration), w)),
        ),
        t,
      ),
  },
  { expr: () => WORKQUEUE.depth, local: (h, t) => h.instant(WORKQUEUE.depth, [], t) },
  {
    expr: () => `histogram_quantile(0.75, ${BUCKET(WORKQUEUE.workDuration)})`,
    local: (h, t) => histogramQuantile(0.75, h.instant(BUCKET(WORKQUEUE.workDuration), [], t)),
  },
];

const WINDOWS: readonly { text: string; ms: number }[] = [
  { text: '1m', ms: 60_000 },
  { text: '90s', ms: 90_000 },
  { text: '5m', ms: 300_000 },
  { text: '10m', ms: 600_000 },
];

/**
 * Evaluation times (unix ms): on the 15 s grid (target a's samples sit exactly on it, so window
 * starts coincide with samples), and off it; around the resets (steps 40, 60) and gaps
 * (steps 90–100, 110–132), and past the end: step 179 is exactly the 5-minute lookback after the
 * last sample of target a (still found: Prometheus 2.x includes both ends), step 180 is past it.
 */
const STEPS_ON_GRID = [
  3, 8, 20, 41, 44, 60, 61, 63, 70, 92, 96, 100, 101, 104, 112, 125, 133, 140, 159, 160, 170, 179, 180,
];
const OFFSETS_MS = [0, 7_500, 1, 14_999, 899];
const TIMES_MS: readonly number[] = STEPS_ON_GRID.flatMap((s, i) => {
  const base = (START + s * 15) * 1000;
  return [base, base + (OFFSETS_MS[i % OFFSETS_MS.length] as number)];
}).filter((t, i, all) => all.indexOf(t) === i);

function key(labels: Labels | Record<string, string>): string {
  const names = Object.keys(labels)
    .filter((n) => n !== LABEL.metricName)
    .sort();
  return names.map((n) => `${n}=${JSON.stringify(labels[n])}`).join(',');
}

function close(a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (a === b) return true;
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

describe('test support', () => {
  it('requireTool names the Debian package to install when a tool is missing', () => {
    expect(requireTool('promtool')).toMatch(/\/promtool$/);
    expect(() => requireTool('prometheus-frobnicator')).toThrow(
      '`prometheus-frobnicator` not found: install Debian package prometheus-frobnicator (apt-get install prometheus-frobnicator)',
    );
  });

  it('formats query times with millisecond precision', () => {
    expect(formatTimeSec(1_700_000_000.0015)).toBe('1700000000.002');
    expect(formatTimeSec(1_700_000_015)).toBe('1700000015.000');
  });
});

describe('parity with Prometheus 2.42', () => {
  let prom: PrometheusHandle;
  let history: History;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wqd-parity-'));
    const file = join(dir, 'recording.om');
    writeFileSync(file, generateRecording(SPEC));
    const tsdb = await importRecording(file);
    prom = await startPrometheus({ storagePath: tsdb });
    history = (await readRecording(file)).history;
  });

  afterAll(async () => {
    await prom?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('imports the same samples as Prometheus stores', async () => {
    const end = (START + 160 * 15) * 1000;
    const remote = await prom.query(`count_over_time(${WORKQUEUE.adds}[1h])`, end / 1000);
    const local = rangeOver(history, 'count_over_time', WORKQUEUE.adds, [], end, 3_600_000).samples;
    expect(local.map((s) => [key(s.labels), s.value]).sort()).toEqual(
      remote.map((s) => [key(s.labels), s.value]).sort(),
    );
    // 160 steps minus the gaps (10 and 22 steps).
    expect(local.map((s) => s.value).sort()).toEqual([138, 150, 150]);
  });

  it('finds a sample exactly 5 minutes old, and none older (lookback includes both ends)', async () => {
    const lastOfA = (START + 159 * 15) * 1000;
    const onA = { label: LABEL.instance, op: '=', value: 'a:8080' } as const;
    const instancesAt = async (ms: number) => ({
      remote: (await prom.query(`${WORKQUEUE.depth}{instance="a:8080"}`, ms / 1000))
        .map((s) => s.labels[LABEL.name])
        .sort(),
      local: history
        .instant(WORKQUEUE.depth, [onA], ms)
        .map((s) => s.labels[LABEL.name])
        .sort(),
    });
    const atEdge = await instancesAt(lastOfA + 300_000);
    expect(atEdge.remote).toEqual(['alpha', 'beta']);
    expect(atEdge.local).toEqual(atEdge.remote);
    const past = await instancesAt(lastOfA + 300_001);
    expect(past.remote).toEqual([]);
    expect(past.local).toEqual([]);
  });

  it('includes a sample exactly at the window start (ranges are closed in Prometheus 2.x)', async () => {
    const t = (START + 20 * 15) * 1000;
    const expr = `count_over_time(${WORKQUEUE.depth}{instance="a:8080"}[1m])`;
    const remote = await prom.query(expr, t / 1000);
    const local = rangeOver(
      history,
      'count_over_time',
      WORKQUEUE.depth,
      [{ label: LABEL.instance, op: '=', value: 'a:8080' }],
      t,
      60_000,
    ).samples;
    expect(remote.map((s) => s.value)).toEqual([5, 5]);
    expect(local.map((s) => s.value)).toEqual([5, 5]);
  });

  it('reports a quantile in the +Inf bucket as the highest finite bound, flagged', async () => {
    const t = (START + 40 * 15) * 1000;
    const expr = `histogram_quantile(0.99, sum by (le, name) (rate(${BUCKET(WORKQUEUE.queueDuration)}{name="beta"}[5m])))`;
    const remote = await prom.query(expr, t / 1000);
    const beta = { label: LABEL.name, op: '=', value: 'beta' } as const;
    // The bucket rates as the evaluator sums them; the quantile function itself says where the rank fell.
    const local = histogramQuantile(
      0.99,
      evaluateOver(
        history,
        aggregateBy('sum', [LABEL.le, LABEL.name], rangeFn('rate', BUCKET(WORKQUEUE.queueDuration), 300_000, [beta])),
        t,
      ),
    );
    expect(remote.map((s) => s.value)).toEqual([10]);
    expect(local).toEqual([{ labels: { name: 'beta' }, value: 10, inInfBucket: true }]);
  });

  it('agrees over a range query (query_range, 15 s steps across the reset and the gaps)', async () => {
    const start = START + 30 * 15;
    const end = START + 140 * 15;
    const remote = await prom.queryRange(`rate(${WORKQUEUE.adds}[2m])`, start, end, 15);
    expect(remote).toHaveLength(3);
    let compared = 0;
    for (const series of remote) {
      for (const [t, value] of series.values) {
        const local = rangeOver(history, 'rate', WORKQUEUE.adds, [], Math.round(t * 1000), 120_000).samples.find(
          (s) => key(s.labels) === key(series.labels),
        );
        expect(local, `${key(series.labels)} @ ${t}`).toBeDefined();
        if (!close(local?.value as number, value))
          expect.fail(`@ ${t} {${key(series.labels)}}: ${local?.value} vs ${value}`);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(250);
  });

  for (const c of CASES) {
    const windows = /\[W[\]:]/.test(c.expr('W')) ? WINDOWS : [WINDOWS[0] as { text: string; ms: number }];
    const title = c.expr('W');
    it(`${title} agrees at ${TIMES_MS.length} times × ${windows.length} windows`, async () => {
      let compared = 0;
      let values = 0;
      for (const w of windows) {
        for (const t of TIMES_MS) {
          const expr = c.expr(w.text);
          const remote = await prom.query(expr, t / 1000);
          const local = c.local(history, t, w.ms);
          const where = `${expr} @ ${t / 1000}`;
          const r = new Map(remote.map((s) => [key(s.labels), s.value]));
          const l = new Map(local.map((s) => [key(s.labels), s.value]));
          expect([...l.keys()].sort(), where).toEqual([...r.keys()].sort());
          for (const [k, rv] of r) {
            const lv = l.get(k) as number;
            if (!close(lv, rv)) expect.fail(`${where} {${k}}: history ${lv}, Prometheus ${rv}`);
            compared++;
            if (!Number.isNaN(rv)) values++;
          }
        }
      }
      // The comparison must have compared real numbers, not only empty results.
      expect(compared).toBeGreaterThan(20);
      expect(values).toBeGreaterThan(10);
    });
  }
});
