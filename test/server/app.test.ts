/**
 * The HTTP application through `inject()`: every route, every error answer in the one error shape, the
 * bearer token, the service's own metrics and the OpenAPI document. The report is a real one: the `mixed`
 * scenario simulated for 30 minutes and diagnosed.
 */
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULES } from '../../src/diagnosis/catalog.js';
import { isFiring, type Report } from '../../src/diagnosis/report.js';
import { RULE_IDS } from '../../src/diagnosis/rule.js';
import { API_ERROR_CODES } from '../../src/server/errors.js';
import type { RulesView } from '../../src/server/rules-view.js';
import {
  type ErrorBody,
  expectValid,
  mixedReport,
  type TestApp,
  testApp,
  validateQueueReport,
  validateReport,
} from './helpers.js';

let report: Report;
let ready: TestApp;
let empty: TestApp;
let secured: TestApp;
const TOKEN = 's3cret-token-0123456789';

beforeAll(async () => {
  report = await mixedReport();
  ready = await testApp({ report });
  empty = await testApp();
  secured = await testApp({ report, apiToken: TOKEN });
});
afterAll(async () => {
  await Promise.all([ready.app.close(), empty.app.close(), secured.app.close()]);
});

function queueByName(r: Report, name: string) {
  const q = r.queues.find((x) => x.queue.name === name);
  if (q === undefined) throw new Error(`no queue ${name}`);
  return q;
}

function expectError(
  response: { statusCode: number; json(): unknown; headers: Record<string, unknown> },
  status: number,
  code: string,
): ErrorBody {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json() as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(API_ERROR_CODES).toContain(body.error.code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}) {
  return app.inject({ method: 'GET', url, headers });
}

describe('GET /api/v1/diagnosis', () => {
  it('serves the latest report, valid against schemas/report.schema.json, with the expected diagnoses', async () => {
    const response = await get(ready.app, '/api/v1/diagnosis');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = response.json() as Report;
    expectValid(validateReport, body);
    expect(body).toEqual(JSON.parse(JSON.stringify(report)));
    const rules = (name: string) => queueByName(body, name).findings.map((f) => f.rule);
    expect(rules('ingress-status')).toContain('WorkqueueHotLoop');
    expect(rules('pod')).toContain('WorkqueueBacklog');
    expect(rules('dbuser')).toContain('WorkqueuePersistentFailures');
    expect(rules('volumesnapshot')).toContain('WorkqueueSlowWork');
    expect(queueByName(body, 'deployment').status).toBe('ok');
  });

  it('answers from the cache until the report changes', async () => {
    const first = (await get(ready.app, '/api/v1/diagnosis')).body;
    expect((await get(ready.app, '/api/v1/diagnosis')).body).toBe(first);
    const app = await testApp({ report });
    try {
      const before = (await get(app.app, '/api/v1/diagnosis')).json() as Report;
      const next: Report = { ...report, evaluatedAt: '2030-01-01T00:00:00.000Z', queues: report.queues.slice(0, 1) };
      app.setReport(next);
      const after = (await get(app.app, '/api/v1/diagnosis')).json() as Report;
      expect(before.queues).toHaveLength(report.queues.length);
      expect(after.evaluatedAt).toBe('2030-01-01T00:00:00.000Z');
      expect(after.queues).toHaveLength(1);
    } finally {
      await app.app.close();
    }
  });

  it('compresses for clients that accept it, and answers 304 to a matching If-None-Match', async () => {
    const plain = await get(ready.app, '/api/v1/diagnosis');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('accept-encoding');
    const etag = String(plain.headers.etag);
    expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);

    const gz = await get(ready.app, '/api/v1/diagnosis', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(plain.body);
    expect(gz.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);

    const br = await get(ready.app, '/api/v1/diagnosis', { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    const noBrotli = await get(ready.app, '/api/v1/diagnosis', { 'accept-encoding': 'br;q=0, gzip;q=0.5' });
    expect(noBrotli.headers['content-encoding']).toBe('gzip');
    expect(br.headers.etag).toBe(etag);

    const notModified = await get(ready.app, '/api/v1/diagnosis', { 'if-none-match': etag });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    const other = await get(ready.app, '/api/v1/diagnosis?status=ok', { 'if-none-match': etag });
    expect(other.statusCode).toBe(200);
    expect(other.headers.etag).not.toBe(etag);
  });

  it('filters by status: repeated, comma-separated, or single', async () => {
    const warning = (await get(ready.app, '/api/v1/diagnosis?status=warning')).json() as Report;
    expectValid(validateReport, warning);
    expect(warning.queues.length).toBeGreaterThan(0);
    expect(warning.queues.every((q) => q.status === 'warning')).toBe(true);
    expect(warning.queues.map((q) => q.id)).toEqual(
      report.queues.filter((q) => q.status === 'warning').map((q) => q.id),
    );

    const okOnly = (await get(ready.app, '/api/v1/diagnosis?status=ok')).json() as Report;
    expect(okOnly.queues.map((q) => q.queue.name)).toEqual(['deployment']);

    const comma = (await get(ready.app, '/api/v1/diagnosis?status=ok,warning')).json() as Report;
    const repeated = (await get(ready.app, '/api/v1/diagnosis?status=warning&status=ok')).json() as Report;
    expect(comma.queues).toHaveLength(warning.queues.length + 1);
    expect(repeated).toEqual(comma);

    const critical = (await get(ready.app, '/api/v1/diagnosis?status=critical')).json() as Report;
    expect(critical.queues).toEqual([]);
    expect(critical.evaluatedAt).toBe(report.evaluatedAt);
  });

  it('filters by rule: queues with a finding of that rule', async () => {
    const hot = (await get(ready.app, '/api/v1/diagnosis?rule=WorkqueueHotLoop')).json() as Report;
    expect(hot.queues.map((q) => q.queue.name)).toEqual(['ingress-status']);
    const two = (await get(ready.app, '/api/v1/diagnosis?rule=WorkqueueHotLoop,WorkqueueSlowWork')).json() as Report;
    expect(two.queues.map((q) => q.queue.name).sort()).toEqual(['ingress-status', 'volumesnapshot']);
    const both = (await get(ready.app, '/api/v1/diagnosis?rule=WorkqueueHotLoop&status=ok')).json() as Report;
    expect(both.queues).toEqual([]);
  });

  it('rejects a bad status or rule with 400, naming the value and what is allowed', async () => {
    const status = expectError(await get(ready.app, '/api/v1/diagnosis?status=broken'), 400, 'bad_request');
    expect(status.error.message).toContain('querystring.status');
    expect(status.error.message).toContain('"broken"');
    expect(status.error.message).toContain('ok, pending, warning, critical, unknown, standby');
    const rule = expectError(await get(ready.app, '/api/v1/diagnosis?rule=WorkqueueHotloop'), 400, 'bad_request');
    expect(rule.error.message).toContain('"WorkqueueHotloop"');
    expect(rule.error.message).toContain('WorkqueueHotLoop');
    expectError(await get(ready.app, '/api/v1/diagnosis?status=ok,nope'), 400, 'bad_request');
  });

  it('answers 503 not_ready with Retry-After before the first evaluation', async () => {
    const response = await get(empty.app, '/api/v1/diagnosis');
    expectError(response, 503, 'not_ready');
    expect(response.headers['retry-after']).toBe('15');
    expectError(await get(empty.app, '/api/v1/diagnosis?status=ok'), 503, 'not_ready');
  });
});

describe('GET /api/v1/queues/:id', () => {
  it('serves one queue, valid against the schema', async () => {
    const pod = queueByName(report, 'pod');
    const response = await get(ready.app, `/api/v1/queues/${encodeURIComponent(pod.id)}`);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expectValid(validateQueueReport, body);
    expect(body).toEqual(JSON.parse(JSON.stringify(pod)));
  });

  it('answers 404 queue_not_found for an unknown id, 400 for an id that cannot be one, 503 before ready', async () => {
    const unknown = expectError(await get(ready.app, '/api/v1/queues/nope~00000000'), 404, 'queue_not_found');
    expect(unknown.error.message).toContain('nope~00000000');
    expectError(await get(ready.app, '/api/v1/queues/a%20b'), 400, 'bad_request');
    expectError(await get(empty.app, `/api/v1/queues/${queueByName(report, 'pod').id}`), 503, 'not_ready');
  });
});

describe('GET /api/v1/targets', () => {
  it('serves the scrape health', async () => {
    const response = await get(ready.app, '/api/v1/targets');
    expect(response.statusCode).toBe(200);
    const body = response.json() as { mode: string; targets: Array<Record<string, unknown>> };
    expect(body.mode).toBe('scrape');
    expect(body.targets[0]).toMatchObject({ target: 'static/127.0.0.1:8080', up: true, lastError: null, samples: 420 });
  });

  it('serves the Prometheus server status in Prometheus mode', async () => {
    const app = await testApp({
      report,
      targets: {
        mode: 'prometheus',
        prometheus: {
          url: 'http://prometheus:9090',
          up: false,
          checkedAt: '2026-01-01T00:00:00.000Z',
          buildInfo: null,
          lastError: { message: 'GET /api/v1/status/buildinfo: connection refused', at: '2026-01-01T00:00:00.000Z' },
        },
      },
    });
    try {
      const body = (await get(app.app, '/api/v1/targets')).json() as {
        mode: string;
        prometheus: Record<string, unknown>;
      };
      expect(body.mode).toBe('prometheus');
      expect(body.prometheus).toMatchObject({ url: 'http://prometheus:9090', up: false, buildInfo: null });
    } finally {
      await app.app.close();
    }
  });

  it('answers 500 internal without leaking the cause when a view fails', async () => {
    const app = await testApp({ report });
    const broken = await (await import('../../src/server/app.js')).buildApp({
      report: () => report,
      ready: () => true,
      targets: () => {
        throw new Error('secret internal detail');
      },
      rules: { rules: [], queueOverrides: [], observations: [] },
      metrics: app.metrics.registry,
    });
    try {
      const body = expectError(await get(broken, '/api/v1/targets'), 500, 'internal');
      expect(body.error.message).not.toContain('secret');
    } finally {
      await Promise.all([broken.close(), app.app.close()]);
    }
  });
});

describe('GET /api/v1/rules', () => {
  it('lists every rule with the thresholds in force, units, descriptions, for, PromQL and meaning', async () => {
    const response = await get(ready.app, '/api/v1/rules');
    expect(response.statusCode).toBe(200);
    const body = response.json() as RulesView;
    expect(body.rules.map((r) => r.id)).toEqual([...RULE_IDS]);
    expect(body.queueOverrides).toEqual([]);
    for (const view of body.rules) {
      const definition = RULES.find((r) => r.id === view.id);
      expect(definition).toBeDefined();
      expect(view.title).toBe(definition?.title);
      expect(view.severity).toBe(definition?.severity);
      expect(view.meaning).toBe(definition?.text.meaning);
      expect(view.enabled).toBe(true);
      expect(view.for).toMatch(/^\d+[smh]/);
      expect(view.expr.length).toBeGreaterThan(0);
      expect(view.runbook).toMatch(new RegExp(`/${view.id}\\.md$`));
      for (const [name, spec] of Object.entries(definition?.thresholds ?? {})) {
        expect(view.thresholds[name]).toEqual({
          value: spec.default,
          default: spec.default,
          unit: spec.unit,
          description: spec.description,
        });
      }
    }
    const backlog = body.rules.find((r) => r.id === 'WorkqueueBacklog');
    expect(backlog?.for).toBe('10m');
    expect(backlog?.expr).toContain('>= 20');
  });
});

describe('errors', () => {
  it('answers 404 not_found for unknown routes and methods, in the error shape', async () => {
    const body = expectError(await get(ready.app, '/api/v2/diagnosis'), 404, 'not_found');
    expect(body.error.message).toContain('/api/v2/diagnosis');
    expectError(await get(ready.app, '/nope'), 404, 'not_found');
    expectError(await ready.app.inject({ method: 'DELETE', url: '/api/v1/diagnosis' }), 404, 'not_found');
    expectError(
      await ready.app.inject({ method: 'POST', url: '/api/v1/diagnosis', payload: { a: 1 } }),
      404,
      'not_found',
    );
  });
});

describe('requests Node refuses before any route', () => {
  /** Sends raw bytes to a listening app and reads the whole answer (the server closes the connection). */
  async function raw(request: string): Promise<{ status: number; body: unknown }> {
    const app = (await testApp({ report })).app;
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      const answer = await new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = net.connect(port, '127.0.0.1', () => socket.end(request));
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          text += chunk;
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
    } finally {
      await app.close();
    }
  }

  it('answer in the error shape: headers or a URL too large, a malformed request line', async () => {
    const longUrl = await raw(`GET /api/v1/queues/${'q'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(longUrl.status).toBe(431);
    expect(longUrl.body).toEqual({
      error: { code: 'headers_too_large', message: expect.stringContaining('too large') },
    });
    const header = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`);
    expect(header.status).toBe(431);
    const garbage = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(garbage.body).toEqual({ error: { code: 'bad_request', message: expect.any(String) } });
  });
});

describe('bearer token', () => {
  const routes = ['/api/v1/diagnosis', '/api/v1/targets', '/api/v1/rules', '/api/v1/queues/x~1', '/api/v1/nope'];

  it('answers 401 on /api/v1 without the token or with a wrong one', async () => {
    for (const url of routes) {
      const missing = await get(secured.app, url);
      expectError(missing, 401, 'unauthorized');
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="workqueue-doctor"');
      expectError(await get(secured.app, url, { authorization: 'Bearer wrong' }), 401, 'unauthorized');
      expectError(await get(secured.app, url, { authorization: `Bearer ${TOKEN}x` }), 401, 'unauthorized');
      expectError(await get(secured.app, url, { authorization: TOKEN }), 401, 'unauthorized');
      expectError(await get(secured.app, url, { authorization: `Basic ${TOKEN}` }), 401, 'unauthorized');
    }
  });

  it('serves /api/v1 with the right token', async () => {
    const response = await get(secured.app, '/api/v1/diagnosis', { authorization: `Bearer ${TOKEN}` });
    expect(response.statusCode).toBe(200);
    expectValid(validateReport, response.json());
    expect((await get(secured.app, '/api/v1/rules', { authorization: `bearer ${TOKEN}` })).statusCode).toBe(200);
    expectError(
      await get(secured.app, '/api/v1/diagnosis?status=x', { authorization: `Bearer ${TOKEN}` }),
      400,
      'bad_request',
    );
  });

  it('never asks for it on /healthz, /readyz, /metrics and the docs', async () => {
    for (const url of ['/healthz', '/readyz', '/metrics', '/docs/json']) {
      expect((await get(secured.app, url)).statusCode, url).toBe(200);
    }
  });
});

describe('health', () => {
  it('/healthz is always 200; /readyz is 503 until the first evaluation', async () => {
    expect((await get(empty.app, '/healthz')).json()).toEqual({ status: 'ok' });
    const notReady = await get(empty.app, '/readyz');
    expectError(notReady, 503, 'not_ready');
    expect(notReady.headers['retry-after']).toBe('15');
    expect((await get(ready.app, '/readyz')).json()).toEqual({ status: 'ready' });
  });
});

describe('GET /metrics', () => {
  it('has one finding series per active finding, with rule, severity, target, name and controller', async () => {
    const response = await get(ready.app, '/metrics');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const lines = response.body.split('\n').filter((l) => l.startsWith('workqueue_doctor_finding{'));
    const expected = report.queues.flatMap((q) =>
      q.findings
        .filter(isFiring)
        .map(
          (f) =>
            `workqueue_doctor_finding{rule="${f.rule}",severity="${f.severity}",target="${q.queue.target}",name="${q.queue.name ?? ''}",controller="${q.queue.controller ?? ''}"} 1`,
        ),
    );
    expect(expected.length).toBeGreaterThanOrEqual(4);
    expect(lines.sort()).toEqual(expected.sort());
    expect(response.body).toContain(
      'workqueue_doctor_finding{rule="WorkqueueHotLoop",severity="warning",target="sim/mixed:8080",name="ingress-status",controller="ingress-status"} 1',
    );
    expect(response.body).not.toMatch(/workqueue_doctor_finding\{[^}]*name="deployment"/);
    expect(response.body).toContain('workqueue_doctor_queues{status="ok"} 1');
    expect(response.body).toContain('workqueue_doctor_target_up{target="static/127.0.0.1:8080"} 1');
    expect(response.body).toContain('# TYPE workqueue_doctor_evaluation_duration_seconds histogram');
  });

  it('drops the series of a finding once it is resolved', async () => {
    const app = await testApp({ report });
    try {
      expect((await get(app.app, '/metrics')).body).toContain('rule="WorkqueueHotLoop"');
      app.setReport({
        ...report,
        queues: report.queues.map((q) =>
          q.queue.name === 'ingress-status' ? { ...q, status: 'ok', findings: [] } : q,
        ),
      });
      const body = (await get(app.app, '/metrics')).body;
      expect(body).not.toContain('rule="WorkqueueHotLoop"');
      expect(body).toContain('rule="WorkqueueBacklog"');
    } finally {
      await app.app.close();
    }
  });

  it('has no finding series before the first evaluation', async () => {
    const body = (await get(empty.app, '/metrics')).body;
    expect(body).toContain('# TYPE workqueue_doctor_finding gauge');
    expect(body).not.toMatch(/^workqueue_doctor_finding\{/m);
    expect(body).not.toMatch(/^workqueue_doctor_queues\{/m);
  });
});

describe('OpenAPI', () => {
  it('lists every route with its schemas, the report schema among the components', async () => {
    const response = await get(ready.app, '/docs/json');
    expect(response.statusCode).toBe(200);
    const doc = response.json() as {
      openapi: string;
      paths: Record<
        string,
        Record<string, { responses: Record<string, unknown>; parameters?: Array<{ name: string }> }>
      >;
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.0.3');
    for (const path of [
      '/api/v1/diagnosis',
      '/api/v1/queues/{id}',
      '/api/v1/targets',
      '/api/v1/rules',
      '/healthz',
      '/readyz',
      '/metrics',
    ]) {
      expect(doc.paths[path]?.get, path).toBeDefined();
    }
    const diagnosis = doc.paths['/api/v1/diagnosis']?.get;
    expect(Object.keys(diagnosis?.responses ?? {}).sort()).toEqual(['200', '400', '503']);
    expect(JSON.stringify(diagnosis?.responses['200'])).toContain('#/components/schemas/Report');
    expect(diagnosis?.parameters?.map((p) => p.name).sort()).toEqual(['rule', 'status']);
    expect(doc.components.schemas).toHaveProperty('Report');
    expect(doc.components.schemas).toHaveProperty('ErrorBody');
    expect(doc.components.securitySchemes).toHaveProperty('bearerAuth');
    const securedDoc = (await get(secured.app, '/docs/json')).json() as typeof doc;
    expect(Object.keys(securedDoc.paths['/api/v1/diagnosis']?.get?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '401',
      '503',
    ]);
  });

  it('serves the UI at /docs', async () => {
    const response = await get(ready.app, '/docs/');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.body).toContain('swagger');
  });
});
