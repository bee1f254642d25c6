/**
 * The engine a Prometheus-mode backend writes its queries for: `auto` asks the server once whether it evaluates
 * MetricsQL (prometheus-backend.ts, `detectDialect`); a stub that answers anything, or refuses anything, is PromQL.
 * Real servers are checked in test/diagnosis/victoria-metrics-parity.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { signal } from '../../src/diagnosis/signals.js';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { createPrometheusClient } from '../../src/prometheus/prometheus-api.js';
import { createPrometheusBackend, detectDialect } from '../../src/prometheus/prometheus-backend.js';
import { type LocalServer, startHttpServer, withApiParameters } from '../support/local-server.js';

const EMPTY_VECTOR = { status: 'success', data: { resultType: 'vector', result: [] } };

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A server answering each query by `answer(query)`: true an empty vector, false a PromQL parse error. */
async function serverAnswering(answer: (query: string) => boolean): Promise<{ url: string; queries: string[] }> {
  const queries: string[] = [];
  server = await startHttpServer(
    withApiParameters((_path, parameter, res) => {
      const query = parameter('query') ?? '';
      queries.push(query);
      res.setHeader('Content-Type', 'application/json');
      if (answer(query)) {
        res.end(JSON.stringify(EMPTY_VECTOR));
        return;
      }
      res.statusCode = 400;
      res.end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error: unknown function' }));
    }),
  );
  return { url: server.origin, queries };
}

const client = (url: string) => createPrometheusClient({ url, timeoutMs: 5_000 });

describe('detectDialect', () => {
  it('is MetricsQL when tfirst_over_time is answered and a function of no language refused', async () => {
    const { url } = await serverAnswering((q) => q.startsWith('tfirst_over_time('));
    expect(await detectDialect(client(url))).toBe('metricsql');
  });

  it('is PromQL when tfirst_over_time is refused (Prometheus, Thanos, Mimir, Cortex)', async () => {
    const { url } = await serverAnswering((q) => !q.startsWith('tfirst_over_time('));
    expect(await detectDialect(client(url))).toBe('promql');
  });

  it('is PromQL from a server that answers anything, or refuses anything', async () => {
    expect(await detectDialect(client((await serverAnswering(() => true)).url))).toBe('promql');
    await server?.close();
    expect(await detectDialect(client((await serverAnswering(() => false)).url))).toBe('promql');
  });

  it('rejects when the server cannot be reached, so the next evaluation asks again', async () => {
    const { url } = await serverAnswering(() => true);
    await server?.close();
    server = undefined;
    await expect(detectDialect(client(url))).rejects.toThrow();
  });
});

describe('a backend', () => {
  const rate = signal('addRate').expr;

  it('on auto asks once, then writes every query for the detected engine', async () => {
    const { url, queries } = await serverAnswering((q) => !q.startsWith('workqueue_doctor_no_such_function('));
    const backend = createPrometheusBackend(client(url), { targetName: 'vm' });
    await backend.evaluate(rate, [1_767_225_600_000]);
    await backend.evaluate(rate, [1_767_225_630_000]);
    expect(queries.filter((q) => q.startsWith(`tfirst_over_time(${WORKQUEUE.depth}[`))).toHaveLength(1);
    const sent = queries.filter((q) => q.startsWith('sum without'));
    expect(sent).toHaveLength(2);
    for (const q of sent) expect(q).toContain(`tfirst_over_time(${WORKQUEUE.adds}[10m])`);
  });

  it('with an engine given, asks nothing and writes for it', async () => {
    const { url, queries } = await serverAnswering(() => true);
    await createPrometheusBackend(client(url), { targetName: 'p', engine: 'prometheus' }).evaluate(rate, [0]);
    await createPrometheusBackend(client(url), { targetName: 'v', engine: 'victoriametrics' }).evaluate(rate, [0]);
    expect(queries).toEqual([
      `sum without (priority) (rate(${WORKQUEUE.adds}[5m]))`,
      `sum without (priority) ((rate(${WORKQUEUE.adds}[5m]) * clamp_max((time() - tfirst_over_time(${WORKQUEUE.adds}[10m])) / 300, 1)))`,
    ]);
  });
});
