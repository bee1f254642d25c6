/**
 * The app listening on 127.0.0.1 against hostile clients, over real sockets (Node's HTTP parser is part of what is
 * tested):
 * - every request of `bench/hostile-requests.ts` (100 KB URLs, 10,000 query parameters, path traversal in
 *   `/api/v1/queues/{id}`, methods other than GET, oversized headers, bodies on GET) gets exactly the answers
 *   listed there, every refusal in the error shape with a short message; no answer carries a file of the machine,
 *   reflects the request or allows another origin; `/healthz` answers after each group;
 * - 10,000 query parameters that a proxy with a longer URL limit would let through reach the app and are answered;
 * - a GET's body is neither read as a filter nor taken for a request;
 * - slow clients: 1,000 connections trickling their headers do not stop `/healthz`, and are cut at the request
 *   timeout with 408 `request_timeout`, as is a client that goes silent in the middle of its headers.
 * Every server and socket a test opens is closed by it. No assertion depends on how long anything took.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Answer,
  describeAnswer,
  exchange,
  HOSTILE_PHASES,
  holdSlowClients,
  rawRequest,
  revealed,
} from '../../bench/hostile-requests.js';
import type { Report } from '../../src/diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { buildApp, type ServerLimits } from '../../src/server/app.js';
import { API_ERROR_CODES } from '../../src/server/errors.js';
import { rulesView } from '../../src/server/rules-view.js';
import { createServiceMetrics } from '../../src/service/service-metrics.js';
import { type ErrorBody, mixedReport, SCRAPE_TARGETS, type TestApp, testApp } from './helpers.js';

const HEALTHZ = rawRequest('GET', '/healthz');
const SLOW_CLIENTS = 1_000;
/** For the tests that wait on the server's timeouts: far longer than they need, on any machine. */
const GENEROUS_MS = 120_000;

let report: Report;
let served: TestApp;
let port: number;

beforeAll(async () => {
  report = await mixedReport();
  served = await testApp({ report });
  port = await listen(served.app);
});
afterAll(async () => {
  await served.app.close();
});

async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

/** The app over the mixed report with `limits`, listening. */
async function limitedApp(limits: Partial<ServerLimits>): Promise<{ app: FastifyInstance; port: number }> {
  const app = await buildApp({
    report: () => report,
    ready: () => true,
    targets: () => SCRAPE_TARGETS,
    rules: rulesView({}, DEFAULT_RUNBOOK_BASE_URL),
    metrics: createServiceMetrics({ processMetrics: false }).registry,
    limits,
  });
  return { app, port: await listen(app) };
}

/** What every answer to a hostile request must be, whatever its status. */
function expectHarmless(answer: Answer): void {
  expect(revealed(answer)).toBeUndefined();
  expect(Object.keys(answer.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  if (answer.status < 400) return;
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(answer.body) as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  expect(API_ERROR_CODES).toContain(body.error.code);
  expect(body.error.message.length).toBeGreaterThan(0);
  // A refusal names what is wrong; it does not echo a long URL or header back.
  expect(body.error.message.length).toBeLessThan(300);
}

async function expectHealthy(healthPort: number): Promise<void> {
  const { answers } = await exchange(healthPort, HEALTHZ);
  expect(answers.map(describeAnswer)).toEqual([{ status: 200 }]);
  expect(JSON.parse(answers[0]?.body ?? '')).toEqual({ status: 'ok' });
}

describe.each(HOSTILE_PHASES)('$name', ({ requests }) => {
  it.each(requests)('$name', async ({ bytes, answers }) => {
    const result = await exchange(port, bytes);
    expect(result.answers.map(describeAnswer)).toEqual(answers);
    for (const answer of result.answers) expectHarmless(answer);
  });

  it('leaves /healthz answering', async () => {
    await expectHealthy(port);
  });
});

describe('10,000 query parameters that reach the app (through a proxy with a longer URL limit)', () => {
  const many = (item: (i: number) => string) => Array.from({ length: 10_000 }, (_, i) => item(i)).join('&');
  const get = (url: string) => served.app.inject({ method: 'GET', url });

  it('ignores unknown ones: the whole report, as without them', async () => {
    const plain = await get('/api/v1/diagnosis');
    const flooded = await get(`/api/v1/diagnosis?${many((i) => `p${i}=${i}`)}`);
    expect(flooded.statusCode).toBe(200);
    expect(flooded.body).toBe(plain.body);
    expect((await get(`/healthz?${many(() => 'a')}`)).json()).toEqual({ status: 'ok' });
  });

  it('filters by 10,000 repetitions of a status as by one, and names the one bad value among them', async () => {
    const once = await get('/api/v1/diagnosis?status=warning');
    const repeated = await get(`/api/v1/diagnosis?${many(() => 'status=warning')}`);
    expect(repeated.statusCode).toBe(200);
    expect(repeated.body).toBe(once.body);
    const listed = await get(`/api/v1/diagnosis?status=${many(() => 'warning').replaceAll('&', ',')}`);
    expect(listed.body).toBe(once.body);

    const oneBad = await get(`/api/v1/diagnosis?${many((i) => (i === 9_999 ? 'status=bogus' : 'status=ok'))}`);
    expect(oneBad.statusCode).toBe(400);
    const body = oneBad.json() as ErrorBody;
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toContain('"bogus"');
  });
});

describe('a body on GET', () => {
  it('is not read: a body that reads like a filter gets the whole report', async () => {
    const plain = await exchange(port, rawRequest('GET', '/api/v1/diagnosis'));
    const filter = '{"status":["critical"]}';
    const withBody = await exchange(
      port,
      rawRequest(
        'GET',
        '/api/v1/diagnosis',
        ['Content-Type: application/json', `Content-Length: ${filter.length}`],
        filter,
      ),
    );
    expect(withBody.answers[0]?.status).toBe(200);
    expect(withBody.answers[0]?.body).toBe(plain.answers[0]?.body);
    expect((JSON.parse(withBody.answers[0]?.body ?? '') as Report).queues).toHaveLength(report.queues.length);
  });

  it('is not taken for a request: a pipelined request after it gets its own answer', async () => {
    const smuggled = 'GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const { answers } = await exchange(
      port,
      `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${smuggled.length}\r\n\r\n${smuggled}` +
        rawRequest('GET', '/readyz'),
    );
    expect(answers.map((a) => JSON.parse(a.body))).toEqual([{ status: 'ok' }, { status: 'ready' }]);
  });
});

describe('what Node would answer without the error shape', () => {
  const errorOf = (answer: Answer | undefined) => JSON.parse(answer?.body ?? '{}') as ErrorBody;

  it('an HTTP/1.1 request without a Host header: 400 bad_request', async () => {
    const { answers } = await exchange(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
    expect(answers[0]?.status).toBe(400);
    expect(errorOf(answers[0]).error.code).toBe('bad_request');
    // HTTP/1.0 has no Host to require.
    const old = await exchange(port, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.answers[0]?.status).toBe(200);
  });

  it('an Expect other than 100-continue: 417 expectation_failed', async () => {
    const { answers } = await exchange(port, rawRequest('GET', '/healthz', ['Expect: 200-ok']));
    expect(answers[0]?.status).toBe(417);
    expect(errorOf(answers[0]).error.code).toBe('expectation_failed');
  });

  it('CONNECT: 404 not_found, and the connection is closed', async () => {
    const { answers, error } = await exchange(
      port,
      'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n',
      GENEROUS_MS,
    );
    expect(error).toBeUndefined();
    expect(answers[0]?.status).toBe(404);
    expect(errorOf(answers[0]).error.code).toBe('not_found');
  });
});

describe('slow clients', () => {
  it(
    `${SLOW_CLIENTS} connections trickling their headers do not stop /healthz or the API`,
    async () => {
      // A request timeout longer than the test, so that the slow clients are all still held while it runs.
      const { app, port: slowPort } = await limitedApp({ requestTimeoutMs: 600_000 });
      const slow = holdSlowClients(slowPort, SLOW_CLIENTS, { trickleEveryMs: 250 });
      try {
        await slow.connected;
        expect(slow.open()).toBe(SLOW_CLIENTS);
        for (let i = 0; i < 20; i++) await expectHealthy(slowPort);
        const diagnosis = await exchange(slowPort, rawRequest('GET', '/api/v1/diagnosis'));
        expect(diagnosis.answers.map(describeAnswer)).toEqual([{ status: 200 }]);
        expect(slow.open()).toBe(SLOW_CLIENTS);
      } finally {
        slow.release();
        await slow.ended;
        await app.close();
      }
    },
    GENEROUS_MS,
  );

  it(
    `${SLOW_CLIENTS} connections trickling their headers are cut at the request timeout with 408 request_timeout`,
    async () => {
      const { app, port: slowPort } = await limitedApp({ requestTimeoutMs: 1_000 });
      const slow = holdSlowClients(slowPort, SLOW_CLIENTS, { trickleEveryMs: 250 });
      try {
        const ends = await slow.ended;
        expect(ends.filter((end) => end.closedBy !== 'server')).toEqual([]);
        const answers = ends.map((end) => (end.answer === undefined ? undefined : describeAnswer(end.answer)));
        expect(new Set(answers.map((a) => JSON.stringify(a)))).toEqual(
          new Set([JSON.stringify({ status: 408, code: 'request_timeout' })]),
        );
        for (const end of ends) if (end.answer !== undefined) expectHarmless(end.answer);
        await expectHealthy(slowPort);
      } finally {
        slow.release();
        await app.close();
      }
    },
    GENEROUS_MS,
  );

  it(
    'a client silent in the middle of its headers gets 408 request_timeout, before its idle connection is dropped',
    async () => {
      // The request timeout, not the idle timeout, ends it: checked every second rather than Node's 30 s, the
      // request timeout comes first by far.
      const { app, port: slowPort } = await limitedApp({ requestTimeoutMs: 1_000, connectionTimeoutMs: 20_000 });
      const silent = holdSlowClients(slowPort, 1);
      try {
        const [end] = await silent.ended;
        expect(end?.closedBy).toBe('server');
        expect(end?.answer === undefined ? undefined : describeAnswer(end.answer)).toEqual({
          status: 408,
          code: 'request_timeout',
        });
      } finally {
        silent.release();
        await app.close();
      }
    },
    GENEROUS_MS,
  );
});
