/**
 * The page at `/` and the series route through `inject()`: what the HTML holds and escapes, the chart data
 * it carries, its static files, the sign-in with a session cookie when a token is configured, and
 * `GET /api/v1/queues/{id}/series` computed once per report. The report is a real one: the `mixed` scenario
 * simulated for 30 minutes and diagnosed, its recording kept as the backend the series read.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiagnosisBackend } from '../../src/diagnosis/backend.js';
import type { Report } from '../../src/diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { buildApp } from '../../src/server/app.js';
import { escapeHtml, scriptJson } from '../../src/server/page/render.js';
import { pageSessions, SESSION_COOKIE, SESSION_TTL_MS } from '../../src/server/page/session.js';
import { rulesView } from '../../src/server/rules-view.js';
import { createDiagnosisService } from '../../src/service/diagnosis-service.js';
import {
  CHARTS,
  chartsForEvidence,
  createQueueSeries,
  type QueueSeries,
  SERIES_SIGNALS,
} from '../../src/service/queue-series.js';
import { createServiceMetrics } from '../../src/service/service-metrics.js';
import type { TargetsView } from '../../src/service/target-status.js';
import { runVirtual } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import type { MetricsSource } from '../../src/sources/source.js';
import { SCRAPE_TARGETS } from './helpers.js';

const TOKEN = 'page-s3cret-token-0123';
let source: MetricsSource;
let report: Report;
let evaluations = 0;
let counting: DiagnosisBackend;

beforeAll(async () => {
  const run = await runVirtual('mixed', {}, { job: 'sim', instance: 'mixed:8080' });
  source = recordingSourceFromText(run.recording.text(), 'mixed.om');
  const end = source.dataRange()?.endMs ?? 0;
  const service = createDiagnosisService({
    source,
    evaluationIntervalMs: 60_000,
    runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL,
    now: () => end,
  });
  const outcome = await service.evaluate();
  if (outcome.report === undefined) throw new Error(`evaluation failed: ${outcome.error}`);
  report = outcome.report;
  counting = {
    evaluate: (expr, times) => {
      evaluations++;
      return source.backend.evaluate(expr, times);
    },
    seriesLabels: (metric, from, to) => source.backend.seriesLabels(metric, from, to),
  };
}, 120_000);
afterAll(async () => {
  await source.close();
});

type Options = { report?: Report; token?: string; series?: QueueSeries; targets?: TargetsView };

async function app(options: Options = {}): Promise<FastifyInstance & { setReport(r: Report | undefined): void }> {
  let current = options.report;
  const metrics = createServiceMetrics({ processMetrics: false });
  const built = await buildApp({
    report: () => current,
    ready: () => current !== undefined,
    targets: () => options.targets ?? SCRAPE_TARGETS,
    rules: rulesView({}, DEFAULT_RUNBOOK_BASE_URL),
    metrics: metrics.registry,
    ...(options.series !== undefined ? { series: options.series } : {}),
    ...(options.token !== undefined ? { apiToken: options.token } : {}),
    evaluationIntervalMs: 15_000,
    version: '0.0.0-test',
  });
  await built.ready();
  return Object.assign(built, {
    setReport(r: Report | undefined) {
      current = r;
    },
  });
}

const closing: FastifyInstance[] = [];
afterAll(async () => {
  await Promise.all(closing.map((a) => a.close()));
});
async function open(options: Options = {}) {
  const a = await app(options);
  closing.push(a);
  return a;
}

function seriesJson(html: string): {
  times: number[];
  charts: Record<string, { signals: Array<{ id: string }> }>;
  queues: Record<string, Record<string, Array<number | null>>>;
} {
  const match = /<script type="application\/json" id="wqd-series">(.*?)<\/script>/s.exec(html);
  if (match === null) throw new Error('no series in the page');
  return JSON.parse(match[1] as string);
}

describe('the page', () => {
  it('shows every queue worst first with its findings, observations, charts and the targets', async () => {
    const a = await open({ report, series: createQueueSeries({ backend: source.backend }) });
    const response = await a.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    const html = response.body;
    expect(html.startsWith('<!doctype html>')).toBe(true);

    // Queues in the report's order (worst first), each with its status badge.
    const positions = report.queues.map((q) => html.indexOf(`id="q-${q.id}"`));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    for (const queue of report.queues) {
      const section = html.slice(html.indexOf(`id="q-${queue.id}"`));
      expect(section).toContain(`<span class="badge ${queue.status}">${queue.status}</span>`);
      for (const finding of queue.findings) {
        expect(section).toContain(`data-rule="${finding.rule}"`);
        expect(html).toContain(escapeHtml(finding.summary));
        expect(html).toContain(escapeHtml(finding.cause));
        expect(html).toContain(escapeHtml(finding.fix));
        expect(html).toContain(`href="${escapeHtml(finding.runbook)}"`);
      }
      for (const observation of queue.observations) expect(html).toContain(escapeHtml(observation.summary));
    }
    expect(html).toContain('Reconcile error rate');
    expect(html).toContain('static/127.0.0.1:8080');
    expect(html).toContain('<span class="badge up">up</span>');

    // The charts' data is inline; every figure has its queue's lines.
    const data = seriesJson(html);
    expect(data.times.length).toBe(61);
    expect(data.times[1]! - data.times[0]!).toBe(30);
    expect(data.times.at(-1)).toBe(Date.parse(report.evaluatedAt) / 1000);
    const figures = [...html.matchAll(/<figure class="chart" data-queue="([^"]+)" data-chart="([^"]+)">/g)];
    expect(figures.length).toBeGreaterThan(5);
    for (const [, queue, chart] of figures) {
      for (const s of data.charts[chart as string]?.signals ?? []) {
        expect(data.queues[queue as string]?.[s.id], `${queue} ${s.id}`).toHaveLength(61);
      }
    }
    const backlog = report.queues.find((q) => q.findings.some((f) => f.rule === 'WorkqueueBacklog'));
    expect(backlog).toBeDefined();
    const depth = data.queues[backlog?.id as string]?.depth ?? [];
    expect(depth.filter((v) => v !== null).length).toBeGreaterThan(50);
    expect(depth.at(-1)).toBeGreaterThan(depth.find((v) => v !== null) as number);
  });

  it('escapes every text it shows and links only http(s) runbooks', async () => {
    const queue = report.queues.find((q) => q.findings.length > 0);
    if (queue === undefined) throw new Error('no finding');
    const evil: Report = {
      ...report,
      queues: [
        {
          ...queue,
          queue: { ...queue.queue, name: '"><img src=x onerror=alert(1)>' },
          findings: [
            {
              ...(queue.findings[0] as Report['queues'][number]['findings'][number]),
              summary: '</script><script>alert(1)</script>',
              runbook: 'javascript:alert(1)',
            },
          ],
        },
      ],
      errors: [{ target: 't<b>', code: 'connection', message: 'refused & <gone>' }],
    };
    const a = await open({ report: evil });
    const html = (await a.inject({ method: 'GET', url: '/' })).body;
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain('refused &amp; &lt;gone&gt;');
    expect(scriptJson({ s: '</script><!--' })).toBe('{"s":"\\u003c/script>\\u003c!--"}');
  });

  it('answers 503 with a page that reloads itself before the first report', async () => {
    const a = await open();
    const response = await a.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('15');
    expect(response.body).toContain('No evaluation has finished yet');
    expect(response.body).toContain('<noscript><meta http-equiv="refresh" content="5"></noscript>');
  });

  it('serves uPlot and its own script and style by hashed names, cached for a year', async () => {
    const a = await open({ report });
    const html = (await a.inject({ method: 'GET', url: '/' })).body;
    const links = [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(links).toHaveLength(4);
    expect(links.some((l) => /^\/assets\/uplot\.[0-9a-f]{12}\.js$/.test(l))).toBe(true);
    for (const link of links) {
      const asset = await a.inject({ method: 'GET', url: link });
      expect(asset.statusCode, link).toBe(200);
      expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(asset.headers['content-type']).toMatch(link.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(asset.body.length).toBeGreaterThan(500);
    }
    const uplot = await a.inject({ method: 'GET', url: links.find((l) => l.includes('uplot') && l.endsWith('.js'))! });
    expect(uplot.body).toContain('uPlot');
    expect((await a.inject({ method: 'GET', url: '/assets/nope.js' })).statusCode).toBe(404);
  });

  it('compresses the page and answers 304 to its ETag', async () => {
    const a = await open({ report });
    const first = await a.inject({ method: 'GET', url: '/', headers: { 'accept-encoding': 'gzip' } });
    expect(first.headers['content-encoding']).toBe('gzip');
    const again = await a.inject({ method: 'GET', url: '/', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });
});

describe('the page behind the API token', () => {
  it('answers 401 with a sign-in form, and 200 to the bearer token', async () => {
    const a = await open({ report, token: TOKEN });
    const denied = await a.inject({ method: 'GET', url: '/' });
    expect(denied.statusCode).toBe(401);
    expect(denied.headers['www-authenticate']).toBe('Bearer realm="workqueue-doctor"');
    expect(denied.body).toContain('<form class="login" method="post" action="/login">');
    expect(denied.body).not.toContain('id="q-');
    expect((await a.inject({ method: 'GET', url: '/', headers: { authorization: 'Bearer nope' } })).statusCode).toBe(
      401,
    );
    const bearer = await a.inject({ method: 'GET', url: '/', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(bearer.statusCode).toBe(200);
    expect(bearer.body).toContain(`id="q-${report.queues[0]?.id}"`);
    expect(bearer.body).not.toContain('Sign out');
    // Static files and the operational routes stay open.
    const asset = /src="(\/assets\/page\.[0-9a-f]+\.js)"/.exec(bearer.body)?.[1] as string;
    expect((await a.inject({ method: 'GET', url: asset })).statusCode).toBe(200);
    for (const url of ['/healthz', '/readyz', '/metrics'])
      expect((await a.inject({ method: 'GET', url })).statusCode).toBe(200);
  });

  it('signs in with the token posted once, by a session cookie that holds no token', async () => {
    const a = await open({ report, token: TOKEN });
    const form = (token: string) =>
      a.inject({
        method: 'POST',
        url: '/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token }).toString(),
      });
    const wrong = await form('nope');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.body).toContain('not the token');

    const ok = await form(TOKEN);
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/');
    const setCookie = String(ok.headers['set-cookie']);
    expect(setCookie).toMatch(
      new RegExp(`^${SESSION_COOKIE}=\\d+\\.[A-Za-z0-9_-]{43}; Max-Age=43200; Path=/; HttpOnly; SameSite=Strict$`),
    );
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(';')[0] as string;
    const page = await a.inject({ method: 'GET', url: '/', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Sign out');
    expect(page.headers.vary).toBe('accept-encoding, authorization, cookie');
    // The cookie is for the page, not the API.
    expect((await a.inject({ method: 'GET', url: '/api/v1/diagnosis', headers: { cookie } })).statusCode).toBe(401);

    // A character inside the MAC (the last one also carries two unused bits, which a flip may not change).
    const middle = cookie.length - 20;
    const tampered = `${cookie.slice(0, middle)}${cookie[middle] === 'A' ? 'B' : 'A'}${cookie.slice(middle + 1)}`;
    expect((await a.inject({ method: 'GET', url: '/', headers: { cookie: tampered } })).statusCode).toBe(401);
    const longer = cookie.replace(/=(\d+)\./, (_m, exp: string) => `=${Number(exp) + 3600}.`);
    expect((await a.inject({ method: 'GET', url: '/', headers: { cookie: longer } })).statusCode).toBe(401);

    const out = await a.inject({ method: 'POST', url: '/logout', headers: { cookie } });
    expect(out.statusCode).toBe(303);
    expect(String(out.headers['set-cookie'])).toMatch(new RegExp(`^${SESSION_COOKIE}=; Max-Age=0;`));
  });

  it('issues sessions that expire and end with the token', () => {
    const sessions = pageSessions(TOKEN);
    const now = Date.parse('2026-01-01T00:00:00Z');
    const cookie = sessions.issue(true, now).split(';')[0] as string;
    expect(sessions.issue(true, now)).toContain('; Secure');
    expect(sessions.valid(cookie, now)).toBe(true);
    expect(sessions.valid(`other=1; ${cookie}`, now + SESSION_TTL_MS - 1000)).toBe(true);
    expect(sessions.valid(cookie, now + SESSION_TTL_MS + 1000)).toBe(false);
    expect(pageSessions('another-token').valid(cookie, now)).toBe(false);
    expect(sessions.valid(undefined, now)).toBe(false);
    expect(sessions.valid(`${SESSION_COOKIE}=garbage`, now)).toBe(false);
    expect(sessions.tokenMatches(TOKEN)).toBe(true);
    expect(sessions.tokenMatches(`${TOKEN}x`)).toBe(false);
  });
});

describe('GET /api/v1/queues/{id}/series', () => {
  it('answers the chart signals of one queue, computed once per report', async () => {
    evaluations = 0;
    const series = createQueueSeries({ backend: counting });
    const a = await open({ report, series });
    const id = report.queues.find((q) => q.queue.name === 'pod')?.id as string;
    const response = await a.inject({ method: 'GET', url: `/api/v1/queues/${id}/series` });
    expect(response.statusCode).toBe(200);
    const body = response.json() as {
      id: string;
      evaluatedAt: string;
      stepSeconds: number;
      times: number[];
      series: Record<string, { title: string; unit: string; values: Array<number | null> }>;
    };
    expect(body.id).toBe(id);
    expect(body.evaluatedAt).toBe(report.evaluatedAt);
    expect(body.stepSeconds).toBe(30);
    expect(body.times).toHaveLength(61);
    expect(Object.keys(body.series)).toEqual([...SERIES_SIGNALS]);
    expect(body.series.depth).toMatchObject({ title: 'Depth', unit: 'items' });
    expect(body.series.maxWorkers?.values.at(-1)).toBe(4);
    const depthNow = report.queues.find((q) => q.id === id)?.signals.depth?.value;
    expect(body.series.depth?.values.at(-1)).toBe(depthNow);
    expect(evaluations).toBe(SERIES_SIGNALS.length);

    // Another queue, another filter, the page: the same computation.
    const other = report.queues.find((q) => q.queue.name === 'dbuser')?.id as string;
    const filtered = await a.inject({ method: 'GET', url: `/api/v1/queues/${other}/series?signals=depth,addRate` });
    expect(Object.keys((filtered.json() as { series: object }).series)).toEqual(['depth', 'addRate']);
    expect((await a.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
    expect(evaluations).toBe(SERIES_SIGNALS.length);

    // A new report: computed again, once.
    a.setReport({ ...report });
    await a.inject({ method: 'GET', url: `/api/v1/queues/${id}/series` });
    await a.inject({ method: 'GET', url: '/' });
    expect(evaluations).toBe(2 * SERIES_SIGNALS.length);
  });

  it('answers 404 for an unknown queue, 400 for an unknown signal, 503 before the first report', async () => {
    const a = await open({ report, series: createQueueSeries({ backend: source.backend }) });
    const unknown = await a.inject({ method: 'GET', url: '/api/v1/queues/nope~00000000/series' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: { code: 'queue_not_found' } });
    const id = report.queues[0]?.id as string;
    const bad = await a.inject({ method: 'GET', url: `/api/v1/queues/${id}/series?signals=nope` });
    expect(bad.statusCode).toBe(400);
    a.setReport(undefined);
    expect((await a.inject({ method: 'GET', url: `/api/v1/queues/${id}/series` })).statusCode).toBe(503);
  });

  it('is in the OpenAPI document, behind the token when one is set', async () => {
    const a = await open({ report, token: TOKEN, series: createQueueSeries({ backend: source.backend }) });
    const doc = (await a.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, { get?: { responses: Record<string, unknown> } } | undefined>;
    };
    expect(Object.keys(doc.paths['/api/v1/queues/{id}/series']?.get?.responses ?? {}).sort()).toEqual([
      '200',
      '400',
      '401',
      '404',
      '503',
    ]);
    expect(doc.paths['/']).toBeUndefined();
    const id = report.queues[0]?.id as string;
    expect((await a.inject({ method: 'GET', url: `/api/v1/queues/${id}/series` })).statusCode).toBe(401);
  });
});

describe('charts of a finding', () => {
  it('follow the evidence, most important first, at most three', () => {
    const ids = (evidence: string[]) =>
      chartsForEvidence(Object.fromEntries(evidence.map((e) => [e, {}]))).map((c) => c.id);
    expect(ids(['depth', 'depthMin', 'addRate', 'completionRate', 'busyWorkers'])).toEqual([
      'depth',
      'throughput',
      'workers',
    ]);
    expect(ids(['reconcileErrorRate', 'errorRatio', 'reconcileRate'])).toEqual(['errors', 'throughput']);
    expect(ids(['longestRunning', 'unfinishedWork', 'maxWorkers', 'completionRate'])).toEqual([
      'longestRunning',
      'workers',
      'throughput',
    ]);
    expect(ids(['leaderStatus'])).toEqual([]);
    for (const chart of CHARTS) for (const s of chart.signals) expect(SERIES_SIGNALS).toContain(s);
  });
});
