/**
 * What a Prometheus can make the service hold or repeat, against a fake Prometheus (node:http on 127.0.0.1):
 * - a huge `error` (20 MiB, over the answer limit; 10 MiB, under it): the client's error, `/api/v1/targets`, the
 *   503 `not_ready` answers and every log line hold at most a few hundred characters of it, and a failure that
 *   repeats every evaluation is logged once;
 * - an answer over `PROMETHEUS_ANSWER_MAX_BYTES` is refused with one clear error, whether it declares its length
 *   or not; one that takes more memory to decode than the decoder may have is refused too;
 * - a large answer (over the inline limit) is decoded on the worker thread to the same result.
 * Counts characters, lines and requests, never time. Every server is closed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import { closeAnswerDecoder, OFF_THREAD_ABOVE_BYTES } from '../../src/prometheus/answer-decoder.js';
import {
  createPrometheusClient,
  PROMETHEUS_ANSWER_MAX_BYTES,
  PrometheusApiError,
  UPSTREAM_TEXT_MAX_CHARS,
} from '../../src/prometheus/prometheus-api.js';
import { capturingLogger } from '../support/capturing-logger.js';

const MiB = 1024 * 1024;
/** What an answer quoting `UPSTREAM_TEXT_MAX_CHARS` of the server's text may add around it. */
const FEW_HUNDRED = UPSTREAM_TEXT_MAX_CHARS + 500;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => closeAnswerDecoder());

/** A fake Prometheus on 127.0.0.1 answering every request with `answer(path)`; counts requests by path. */
async function fakePrometheus(
  answer: (path: string, res: http.ServerResponse) => void,
): Promise<{ url: string; requests: Map<string, number> }> {
  const requests = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    req.resume();
    req.on('end', () => answer(path, res));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  closers.push(
    () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const json = (res: http.ServerResponse, body: string, declareLength = true): void => {
  res.writeHead(200, {
    'Content-Type': 'application/json',
    ...(declareLength ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}),
  });
  res.end(body);
};

/** An API error answer (with status 200, as a proxy in between may make it) whose `error` is `chars` long. */
const hugeError = (chars: number): string =>
  JSON.stringify({ status: 'error', errorType: 'execution', error: `query failed: ${'x'.repeat(chars - 14)}` });

async function failure(promise: Promise<unknown>): Promise<PrometheusApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PrometheusApiError);
  return error as PrometheusApiError;
}

describe('the Prometheus client', () => {
  it('cuts a huge error to a few hundred characters, saying how long it was', async () => {
    const chars = 10 * MiB;
    const fake = await fakePrometheus((_path, res) => json(res, hugeError(chars)));
    const client = createPrometheusClient({ url: fake.url, timeoutMs: 30_000 });
    const error = await failure(client.query('up'));
    expect(error.kind).toBe('api');
    expect(error.message.length).toBeLessThan(FEW_HUNDRED);
    expect(error.message).toContain(`… (${chars} characters)`);
  });

  it('refuses an answer over the limit with one clear error, with or without Content-Length', async () => {
    const body = hugeError(PROMETHEUS_ANSWER_MAX_BYTES + 1024);
    for (const declareLength of [true, false]) {
      const fake = await fakePrometheus((_path, res) => json(res, body, declareLength));
      const client = createPrometheusClient({ url: fake.url, timeoutMs: 30_000 });
      const error = await failure(client.query('up'));
      expect([error.kind, error.errorType]).toEqual(['transport', 'too_large']);
      expect(error.message).toContain(`the answer is larger than ${PROMETHEUS_ANSWER_MAX_BYTES} bytes`);
      expect(error.message.length).toBeLessThan(FEW_HUNDRED);
    }
  });

  it('refuses an answer that would take more memory to decode than the decoder has', async () => {
    // 15 MiB of one-sample arrays: within the byte limit, but about 16 times that once parsed.
    const points = Math.floor((15 * MiB) / 8);
    const body = `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[${'[1,"1"],'.repeat(points - 1)}[1,"1"]]}]}}`;
    const fake = await fakePrometheus((_path, res) => json(res, body));
    const client = createPrometheusClient({ url: fake.url, timeoutMs: 60_000 });
    const error = await failure(client.queryRange('up', 0, 1, 1));
    expect([error.kind, error.errorType]).toEqual(['decode', 'bad_response']);
    expect(error.message).toMatch(/takes more than the decoder's \d+ MiB/);
  }, 60_000);

  it('decodes a large answer on the worker thread to the same samples', async () => {
    const series = 3_000;
    const result = Array.from({ length: series }, (_s, i) => ({
      metric: { __name__: 'workqueue_depth', name: `queue-${i}`, job: 'controller' },
      values: Array.from({ length: 20 }, (_p, t) => [1_700_000_000 + t * 30, t === 0 ? 'NaN' : String(i + t / 4)]),
    }));
    const body = JSON.stringify({ status: 'success', warnings: ['partial'], data: { resultType: 'matrix', result } });
    expect(Buffer.byteLength(body)).toBeGreaterThan(OFF_THREAD_ABOVE_BYTES);
    const fake = await fakePrometheus((_path, res) => json(res, body));
    const client = createPrometheusClient({ url: fake.url, timeoutMs: 30_000 });
    const matrix = await client.queryRange('workqueue_depth', 1_700_000_000, 1_700_000_570, 30);
    expect(matrix.warnings).toEqual(['partial']);
    expect(matrix.result).toHaveLength(series);
    const last = matrix.result[series - 1];
    expect(last?.metric).toEqual({ __name__: 'workqueue_depth', name: `queue-${series - 1}`, job: 'controller' });
    expect(last?.samples[0]?.value).toBeNaN();
    expect(last?.samples[19]).toEqual({ timeSec: 1_700_000_570, value: series - 1 + 19 / 4 });
  });
});

describe('the service in Prometheus mode', () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('repeats at most a few hundred characters of a huge error, and logs a repeated failure once', async () => {
    const lines: string[] = [];
    const logger = capturingLogger(lines);
    // The build info: a 20 MiB error (over the answer limit); every query: a 10 MiB one (under it).
    const fake = await fakePrometheus((path, res) =>
      json(res, hugeError(path === '/api/v1/status/buildinfo' ? 20 * MiB : 10 * MiB)),
    );
    const config = resolveServiceConfig({
      flags: { prometheusUrl: fake.url, listen: '127.0.0.1:0', evaluationInterval: '1s', prometheusTimeout: '30s' },
      env: {},
    });
    server = await startServer(config, { logger, processMetrics: false });
    const queries = (): number =>
      [...fake.requests].filter(([path]) => path !== '/api/v1/status/buildinfo').reduce((n, [, count]) => n + count, 0);
    for (let i = 0; i < 600 && queries() < 4; i++) await new Promise((done) => setTimeout(done, 50));
    expect(queries()).toBeGreaterThanOrEqual(4);

    const targets = await (await fetch(`${server.origin}/api/v1/targets`)).text();
    expect(targets.length).toBeLessThan(FEW_HUNDRED);
    expect(targets).toContain('the answer is larger than');
    // Queries are under way before the first evaluation has failed: wait for /readyz to give its reason.
    let readyz = await fetch(`${server.origin}/readyz`);
    let notReady = await readyz.text();
    for (let i = 0; i < 600 && !notReady.includes('characters)'); i++) {
      await new Promise((done) => setTimeout(done, 50));
      readyz = await fetch(`${server.origin}/readyz`);
      notReady = await readyz.text();
    }
    expect(readyz.status).toBe(503);
    expect(notReady.length).toBeLessThan(FEW_HUNDRED + 200);
    expect(notReady).toContain(`… (${10 * MiB} characters)`);

    await server.close();
    server = undefined;
    for (const line of lines) expect(line.length).toBeLessThan(FEW_HUNDRED + 200);
    // Every evaluation failed the same way; the log says so once.
    expect(lines.filter((line) => line.includes('evaluation failed'))).toHaveLength(1);
  }, 60_000);
});
