/**
 * The series refresh of a Prometheus-mode backend (prometheus-backend.ts): with `seriesRefreshMs`, a metric's
 * series lookup stands for later windows ending within that long of its own, and is asked again past it, for a
 * window that ends earlier or starts before it, and after an empty or failed answer; without it, every lookup asks.
 * Against a stub server that counts the lookups and can add a series or fail.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createPrometheusClient } from '../../src/prometheus/prometheus-api.js';
import { createPrometheusBackend } from '../../src/prometheus/prometheus-backend.js';
import { type LocalServer, startHttpServer, withApiParameters } from '../support/local-server.js';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const MINUTE = 60_000;
const T0 = 1_767_225_600_000;
const LOOKBACK = 30 * MINUTE;

type Stub = { url: string; lookups: () => number; set: (queues: string[] | 'fail') => void };

/** A server listing `workqueue_depth` for the queues it is set to (or failing), counting the lookups. */
async function stubServer(initial: string[]): Promise<Stub> {
  let queues: string[] | 'fail' = initial;
  let lookups = 0;
  server = await startHttpServer(
    withApiParameters((path, _parameter, res) => {
      res.setHeader('Content-Type', 'application/json');
      if (path !== '/api/v1/series') {
        res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }));
        return;
      }
      lookups += 1;
      if (queues === 'fail') {
        res.statusCode = 503;
        res.end(JSON.stringify({ status: 'error', errorType: 'unavailable', error: 'overloaded' }));
        return;
      }
      const data = queues.map((name) => ({ __name__: 'workqueue_depth', job: 'j', instance: 'i', name }));
      res.end(JSON.stringify({ status: 'success', data }));
    }),
  );
  return {
    url: server.origin,
    lookups: () => lookups,
    set: (next) => {
      queues = next;
    },
  };
}

function backendFor(url: string, seriesRefreshMs?: number) {
  return createPrometheusBackend(createPrometheusClient({ url, timeoutMs: 5_000 }), {
    targetName: 'p',
    ...(seriesRefreshMs === undefined ? {} : { seriesRefreshMs }),
  });
}

const namesAt = async (backend: ReturnType<typeof backendFor>, atMs: number) =>
  (await backend.seriesLabels('workqueue_depth', atMs - LOOKBACK, atMs)).map((l) => l.name);

describe('series refresh', () => {
  it('keeps a lookup for the evaluations within the refresh, then lists again', async () => {
    const stub = await stubServer(['a']);
    const backend = backendFor(stub.url, 5 * MINUTE);
    expect(await namesAt(backend, T0)).toEqual(['a']);
    stub.set(['a', 'b']);
    // 15 s evaluations for under five minutes: the first list stands, the new queue is not asked for.
    for (let k = 1; k < 20; k++) expect(await namesAt(backend, T0 + k * 15_000)).toEqual(['a']);
    expect(stub.lookups()).toBe(1);
    // Five minutes after the list: listed again, the new queue found.
    expect(await namesAt(backend, T0 + 5 * MINUTE)).toEqual(['a', 'b']);
    expect(stub.lookups()).toBe(2);
    // A window ending before the kept one (a replay, an older time): asked.
    expect(await namesAt(backend, T0)).toEqual(['a', 'b']);
    expect(stub.lookups()).toBe(3);
  });

  it('never keeps an empty or failed answer', async () => {
    const stub = await stubServer([]);
    const backend = backendFor(stub.url, 5 * MINUTE);
    expect(await namesAt(backend, T0)).toEqual([]);
    stub.set('fail');
    await expect(namesAt(backend, T0 + 15_000)).rejects.toThrow();
    stub.set(['a']);
    expect(await namesAt(backend, T0 + 30_000)).toEqual(['a']);
    expect(stub.lookups()).toBe(3);
    expect(await namesAt(backend, T0 + 45_000)).toEqual(['a']);
    expect(stub.lookups()).toBe(3);
  });

  it('without a refresh, every lookup asks the server', async () => {
    const stub = await stubServer(['a']);
    const backend = backendFor(stub.url);
    await namesAt(backend, T0);
    await namesAt(backend, T0 + 15_000);
    expect(stub.lookups()).toBe(2);
  });
});
