/**
 * What a Prometheus-mode backend asks for when given the recorded signals (recorded-series.ts): in each mode, which
 * signals are read from their recorded series and which from the raw ones, against a stub server that says which
 * recorded series it holds; and the changes it tells a service from how late samples may arrive. A real Prometheus
 * holding recorded series is checked in test/diagnosis/parity.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { signal } from '../../src/diagnosis/signals.js';
import { createPrometheusClient } from '../../src/prometheus/prometheus-api.js';
import { createPrometheusBackend } from '../../src/prometheus/prometheus-backend.js';
import type { RecordedSeriesMode, RecordedSignal } from '../../src/prometheus/recorded-series.js';
import { binary, num, signalRef } from '../../src/promql/expr.js';
import { type LocalServer, startHttpServer, withApiParameters } from '../support/local-server.js';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const depth = signal('depth');
const addRate = signal('addRate');
const SIGNALS: ReadonlyMap<string, RecordedSignal> = new Map([
  ['depth', { series: 'queue:workqueue_depth:sum', expr: depth.expr }],
  ['addRate', { series: 'queue:workqueue_adds:rate5m', expr: addRate.expr }],
]);
/** A condition over both signals, as the rules write them. */
const CONDITION = binary(
  'and',
  signalRef('depth', depth.expr),
  binary('>', signalRef('addRate', addRate.expr), num(5)),
);

/**
 * A server holding the recorded series `held` from `sinceSec` on (an empty vector for every other query), and the
 * queries it was sent.
 */
async function serverHolding(held: readonly string[], sinceSec: number): Promise<{ url: string; queries: string[] }> {
  const queries: string[] = [];
  server = await startHttpServer(
    withApiParameters((path, parameter, res) => {
      const query = parameter('query') ?? '';
      const time = Number(parameter('time') ?? Number.NaN);
      queries.push(query);
      const there = time >= sinceSec ? held : [];
      let result: unknown[] = [];
      if (query.startsWith('count by (__name__)')) {
        result = there.map((name) => ({ metric: { __name__: name }, value: [time, '3'] }));
      } else if (query.startsWith('count(queue:workqueue_depth:sum')) {
        result = there.includes('queue:workqueue_depth:sum') ? [{ metric: {}, value: [time, '3'] }] : [];
      }
      const resultType = path.endsWith('/query_range') ? 'matrix' : 'vector';
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ status: 'success', data: { resultType, result } }));
    }),
  );
  return { url: server.origin, queries };
}

async function queryFor(
  mode: RecordedSeriesMode,
  held: readonly string[],
  sinceSec = 0,
  atSec = 1_000,
): Promise<string> {
  const { url, queries } = await serverHolding(held, sinceSec);
  const backend = createPrometheusBackend(createPrometheusClient({ url, timeoutMs: 5_000 }), {
    targetName: 'p',
    engine: 'prometheus',
    selector: [{ label: 'job', op: '=~', value: 'op.*' }],
    recorded: { mode, signals: SIGNALS },
  });
  await backend.evaluate(CONDITION, [atSec * 1000]);
  const sent = queries.at(-1);
  if (sent === undefined) throw new Error('no query sent');
  return sent;
}

describe('recorded series', () => {
  it('off: every signal from the raw series, and nothing asked about recorded ones', async () => {
    const { url, queries } = await serverHolding(['queue:workqueue_depth:sum'], 0);
    const backend = createPrometheusBackend(createPrometheusClient({ url, timeoutMs: 5_000 }), {
      targetName: 'p',
      engine: 'prometheus',
      recorded: { mode: 'off', signals: SIGNALS },
    });
    await backend.evaluate(CONDITION, [1_000_000]);
    expect(await backend.gridPhase?.(30_000, 1_000_000)).toBe(0);
    expect(queries).toHaveLength(1);
    expect(queries[0]).not.toContain(':');
  });

  it('on: every recorded signal from its series, the fleet selector on it, its name dropped', async () => {
    const query = await queryFor('on', []);
    expect(query).toContain('(queue:workqueue_depth:sum{job=~"op.*"} * 1)');
    expect(query).toContain('(queue:workqueue_adds:rate5m{job=~"op.*"} * 1) > 5');
    expect(query).not.toContain('workqueue_adds_total');
  });

  it('auto: the recorded series the server holds, the raw series for the others', async () => {
    const query = await queryFor('auto', ['queue:workqueue_depth:sum']);
    expect(query).toContain('(queue:workqueue_depth:sum{job=~"op.*"} * 1)');
    expect(query).toContain('rate(workqueue_adds_total{job=~"op.*"}[5m])');
  });

  it('auto: the raw series where the rule group was not evaluated at the first time asked', async () => {
    const { url, queries } = await serverHolding(['queue:workqueue_depth:sum', 'queue:workqueue_adds:rate5m'], 900);
    const backend = createPrometheusBackend(createPrometheusClient({ url, timeoutMs: 5_000 }), {
      targetName: 'p',
      engine: 'prometheus',
      recorded: { mode: 'auto', signals: SIGNALS },
    });
    await backend.evaluate(CONDITION, [870_000, 900_000, 930_000]);
    expect(queries.at(-1)).not.toContain('queue:');
    await backend.evaluate(CONDITION, [900_000, 930_000]);
    expect(queries.at(-1)).toContain('queue:workqueue_adds:rate5m');
  });
});

describe('late samples', () => {
  it('keep nothing without a bound on them', () => {
    const backend = createPrometheusBackend(createPrometheusClient({ url: 'http://127.0.0.1:9', timeoutMs: 5_000 }), {
      targetName: 'p',
    });
    expect(backend.changes).toBeUndefined();
  });

  it('change everything at first, then what is younger than the bound before the previous question', () => {
    const backend = createPrometheusBackend(createPrometheusClient({ url: 'http://127.0.0.1:9', timeoutMs: 5_000 }), {
      targetName: 'p',
      maxSampleDelayMs: 120_000,
    });
    const reader = backend.changes?.();
    const before = Date.now();
    expect(reader?.takeEarliest()).toBe(Number.NEGATIVE_INFINITY);
    const after = Date.now();
    const earliest = reader?.takeEarliest() ?? Number.NaN;
    expect(earliest).toBeGreaterThanOrEqual(before - 120_000);
    expect(earliest).toBeLessThanOrEqual(after - 120_000);
  });
});
