/**
 * The page at `/` and the series routes through `inject()`: what the HTML holds and escapes, the chart data
 * it carries (each finding's charts with its rule's thresholds and onset), the evidence folded as it reads,
 * the filters, the Grafana links, its static files, the sign-in with a session cookie when a token is
 * configured, the charts of a closed row (`/queue-charts/{id}`), and `GET /api/v1/queues/{id}/series`
 * computed once per report. The report is a real one: the `mixed` scenario simulated for 30 minutes and
 * diagnosed, its recording kept as the backend the series read.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import type { DiagnosisBackend } from '../../src/diagnosis/backend.js';
import { ruleSettings } from '../../src/diagnosis/catalog.js';
import type { Report } from '../../src/diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { queueVariables } from '../../src/generate/dashboards/common.js';
import { DASHBOARD_UID } from '../../src/generate/defaults.js';
import { buildApp } from '../../src/server/app.js';
import { type ChartPayload, signalsToExplain } from '../../src/server/page/chart-figures.js';
import { escapeHtml, scriptJson } from '../../src/server/page/html.js';
import type { PageSettings } from '../../src/server/page/queue-context.js';
import { OPEN_ATTENTION_LIMIT } from '../../src/server/page/render.js';
import { pageSessions, SESSION_COOKIE, SESSION_TTL_MS } from '../../src/server/page/session.js';
import { rulesView } from '../../src/server/rules-view.js';
import {
  CHARTS,
  chartsForEvidence,
  createQueueSeries,
  type QueueSeries,
  SERIES_SIGNALS,
} from '../../src/service/queue-series.js';
import { createServiceMetrics } from '../../src/service/service-metrics.js';
import type { TargetsView } from '../../src/service/target-status.js';
import type { MetricsSource } from '../../src/sources/source.js';
import { mixedReportAtEnd } from '../support/mixed-report.js';
import { SCRAPE_TARGETS } from './helpers.js';

const TOKEN = 'page-s3cret-token-0123';
let source: MetricsSource;
let report: Report;
let evaluations = 0;
let counting: DiagnosisBackend;

beforeAll(async () => {
  const mixed = await mixedReportAtEnd();
  source = mixed.source;
  report = mixed.report;
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

type Options = { report?: Report; token?: string; series?: QueueSeries; targets?: TargetsView; page?: PageSettings };

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
    ...(options.page !== undefined ? { page: options.page } : {}),
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

function seriesJson(html: string): ChartPayload {
  const match = /<script type="application\/json" id="wqd-series">(.*?)<\/script>/s.exec(html);
  if (match === null) throw new Error('no series in the page');
  return JSON.parse(match[1] as string);
}

/** The part of the page from a queue's row to the next row. */
function rowOf(html: string, id: string): string {
  const start = html.indexOf(`id="q-${id}"`);
  const end = html.indexOf('<details class="queue', start + 1);
  return html.slice(start, end < 0 ? undefined : end);
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

    // Queues in the report's order (worst first), each with its status badge (icon and word).
    const positions = report.queues.map((q) => html.indexOf(`id="q-${q.id}"`));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
    for (const queue of report.queues) {
      const row = rowOf(html, queue.id);
      expect(row).toContain(`<span class="badge ${queue.status}" data-status="${queue.status}">`);
      expect(row).toMatch(new RegExp(`aria-hidden="true">[^<]+</span>${queue.status}</span>`));
      // Rows needing attention are open; the others one line each.
      expect(row.startsWith(`id="q-${queue.id}"`)).toBe(true);
      expect(/^[^>]* open>/.test(row)).toBe(queue.status !== 'ok');
      for (const finding of queue.findings) {
        expect(row).toContain(`data-rule="${finding.rule}"`);
        // The row's one line says each finding's summary, not only its rule.
        expect(row).toContain(`<span class="line">${escapeHtml(finding.summary)}</span>`);
        expect(html).toContain(escapeHtml(finding.cause));
        expect(html).toContain(escapeHtml(finding.fix));
        expect(html).toContain(`href="${escapeHtml(finding.runbook)}"`);
      }
      for (const observation of queue.observations) expect(html).toContain(escapeHtml(observation.summary));
    }
    expect(html).toContain('Reconcile error rate');
    expect(html).toContain('static/127.0.0.1:8080');
    expect(html).toContain('<span class="badge up">up</span>');

    // The charts' data is inline for the open rows; every figure has its spec and its queue's lines.
    const data = seriesJson(html);
    expect(data.times.length).toBe(61);
    expect(data.times[1]! - data.times[0]!).toBe(30);
    expect(data.times.at(-1)).toBe(Date.parse(report.evaluatedAt) / 1000);
    const figures = [...html.matchAll(/<figure class="chart" data-queue="([^"]+)" data-figure="([^"]+)">/g)];
    expect(figures.length).toBeGreaterThan(5);
    expect(figures.map(([, , key]) => key)).toEqual(data.figures.map((f) => f.key));
    for (const [, queue, key] of figures) {
      const spec = data.figures.find((f) => f.key === key);
      expect(spec?.queue).toBe(queue);
      expect(spec?.signals.length).toBeGreaterThan(0);
      for (const s of spec?.signals ?? [])
        expect(data.values[queue as string]?.[s.id], `${key} ${s.id}`).toHaveLength(61);
    }
    const backlog = report.queues.find((q) => q.findings.some((f) => f.rule === 'WorkqueueBacklog'));
    expect(backlog).toBeDefined();
    const depth = data.values[backlog?.id as string]?.depth ?? [];
    expect(depth.filter((v) => v !== null).length).toBeGreaterThan(50);
    expect(depth.at(-1)).toBeGreaterThan(depth.find((v) => v !== null) as number);
    // The ok queue's charts are not inline: its closed row fetches them when opened.
    const ok = report.queues.find((q) => q.status === 'ok');
    expect(data.values[ok?.id as string]).toBeUndefined();
    expect(rowOf(html, ok?.id as string)).toContain(`data-queue="${ok?.id}" data-group="overview" data-lazy`);
  });

  it(`starts every row closed beyond ${OPEN_ATTENTION_LIMIT} needing attention, and carries no chart data inline then`, async () => {
    const firing = report.queues.find((q) => q.findings.length > 0) as Report['queues'][number];
    const many = Array.from({ length: OPEN_ATTENTION_LIMIT + 1 }, (_, i) => ({ ...firing, id: `${firing.id}-${i}` }));
    const a = await open({
      report: { ...report, queues: many },
      series: createQueueSeries({ backend: source.backend }),
    });
    const html = (await a.inject({ method: 'GET', url: '/' })).body;
    expect(html.match(/<details class="queue [^>]*>/g)).toHaveLength(many.length);
    expect(html).not.toMatch(/<details class="queue [^>]* open>/);
    expect(html).not.toContain('<figure');
    expect(seriesJson(html).figures).toEqual([]);
    // One row fewer: the rows needing attention are open again.
    const b = await open({
      report: { ...report, queues: many.slice(1) },
      series: createQueueSeries({ backend: source.backend }),
    });
    expect((await b.inject({ method: 'GET', url: '/' })).body.match(/<details class="queue [^>]* open>/g)).toHaveLength(
      OPEN_ATTENTION_LIMIT,
    );
  });

  it("charts each finding's decisive evidence with its rule's thresholds in force and its onset", async () => {
    const overrides = { rules: { WorkqueueHotLoop: { thresholds: { minAddRate: 2.5 } } } };
    const a = await open({
      report,
      series: createQueueSeries({ backend: source.backend }),
      page: { overrides },
    });
    const data = seriesJson((await a.inject({ method: 'GET', url: '/' })).body);
    const figuresOf = (rule: string) => data.figures.filter((f) => f.group === rule);
    const settings = (rule: string) => ruleSettings(overrides).find((s) => s.rule.id === rule);

    // Hot loop: API writes (and failed writes, errors, retries) beside the adds, with the add-rate threshold in force.
    const [loop] = figuresOf('WorkqueueHotLoop');
    expect(loop?.signals.map((s) => s.id).slice(0, 2)).toEqual(['addRateMedian', 'writeRateMedian']);
    expect(loop?.thresholds).toEqual([
      { label: 'minAddRate ≥ 2.5/s', value: settings('WorkqueueHotLoop')?.thresholds.minAddRate },
    ]);
    expect(loop?.unit).toBe('1/s');
    // Persistent failures: errors beside the conflicts; the unexplained error ratio with both its thresholds.
    const failures = figuresOf('WorkqueuePersistentFailures');
    const ids = failures.map((f) => f.signals.map((s) => s.id));
    expect(ids.some((list) => list.includes('reconcileErrorRate') && list.includes('conflictRate'))).toBe(true);
    const ratio = failures.find((f) => f.unit === 'ratio');
    const thresholds = settings('WorkqueuePersistentFailures')?.thresholds ?? {};
    expect(ratio?.thresholds.map((t) => t.value).sort()).toEqual(
      [thresholds.minRecentErrorRatio, thresholds.minErrorRatio].sort(),
    );
    // Every finding's charts mark when its condition began to hold and when it fired (since + for).
    for (const queue of report.queues) {
      for (const finding of queue.findings) {
        const charts = figuresOf(finding.rule).filter((f) => f.queue === queue.id);
        expect(charts.length, finding.rule).toBeGreaterThan(0);
        const since = Date.parse(finding.since ?? '') / 1000;
        const forSeconds = (settings(finding.rule)?.forMs ?? 0) / 1000;
        for (const chart of charts) {
          expect(chart.markers).toEqual([
            { t: since, kind: 'onset', label: 'holds' },
            { t: since + forSeconds, kind: 'fired', label: 'fired' },
          ]);
          expect(chart.severity).toBe(finding.severity);
        }
      }
    }
  });

  it('shows the evidence the rule reads first, and folds rows without data or at zero', async () => {
    const queue = report.queues.find((q) => q.findings.some((f) => f.rule === 'WorkqueueBacklog'));
    const finding = queue?.findings.find((f) => f.rule === 'WorkqueueBacklog');
    if (queue === undefined || finding === undefined) throw new Error('no backlog');
    const evidence = {
      ...finding.evidence,
      lowPriorityDepth: { value: null, unit: 'items', missing: 'metric_absent' },
      busyWorkers: { value: 0, unit: 'workers' },
    } as const;
    const a = await open({ report: { ...report, queues: [{ ...queue, findings: [{ ...finding, evidence }] }] } });
    const html = (await a.inject({ method: 'GET', url: '/' })).body;
    const table = html.slice(
      html.indexOf('<table class="evidence">'),
      html.indexOf('</div>', html.indexOf('<table class="evidence">')),
    );
    const [shown, ...folded] = table.split('<details class="more">');
    // The depth floor is compared with minDepth: a decisive row, with the threshold said.
    expect(shown).toMatch(
      /<tr class="decisive"><th scope="row">Depth \(floor of the last minute\)<\/th><td>[^<]+<\/td><td class="compared">rule: ≥ 20 items \(minDepth\)<\/td>/,
    );
    expect(shown?.indexOf('class="decisive"')).toBeLessThan(shown?.indexOf('<tr><th') ?? -1);
    expect(shown).not.toContain('Depth (low priority)');
    expect(folded.join('')).toMatch(/<summary>\d+ more without data<\/summary>.*Depth \(low priority\)/s);
    expect(folded.join('')).toMatch(/<summary>\d+ more at zero<\/summary>.*Busy workers/s);
  });

  it('offers filters over the statuses, rules, controllers, namespaces and clusters the report has', async () => {
    // The mixed scenario's target carries no namespace: give its queues' series two, and a region.
    const real = createQueueSeries({ backend: source.backend });
    const namespace = (i: number): string => (i % 2 === 0 ? 'team-a' : 'team-b');
    const labelled: QueueSeries = {
      async forReport(r) {
        const set = await real.forReport(r);
        const labels = [...set.labels].map(([id, l], i) => [id, { ...l, ns: namespace(i), region: 'east' }] as const);
        return { ...set, labels: new Map(labels) };
      },
      signalsFor: (r, signals) => real.signalsFor(r, signals),
    };
    const a = await open({
      report,
      series: labelled,
      page: { scope: { namespaceLabel: 'ns', clusterLabel: 'region' } },
    });
    const html = (await a.inject({ method: 'GET', url: '/' })).body;
    const form = html.slice(
      html.indexOf('<form class="filters"'),
      html.indexOf('</form>', html.indexOf('<form class="filters"')),
    );
    // Hidden without the script, which shows it.
    expect(form).toMatch(/^<form class="filters" id="filters" role="search" aria-label="[^"]+" hidden>/);
    for (const group of ['firing', 'pending', 'unknown', 'ok'])
      expect(form).toContain(`<input type="checkbox" name="status" value="${group}">`);
    expect(form).not.toContain('value="standby"');
    expect(form).toContain('<option value="WorkqueueHotLoop">Work queue hot loop (1)</option>');
    expect(form).toContain('<select name="controller">');
    expect(form).toMatch(
      /<select name="namespace"><option value="">any namespace<\/option><option value="team-a">team-a \(3\)<\/option><option value="team-b">team-b \(2\)<\/option>/,
    );
    expect(form).toContain('<option value="east">east (5)</option>');
    expect(form).toContain('<input type="search" name="q"');
    // Each row carries what the filters select it by.
    const first = report.queues[0];
    expect(rowOf(html, first?.id as string)).toMatch(
      new RegExp(
        `data-group="firing" data-rules="${first?.findings[0]?.rule}" data-controller="${first?.queue.controller}" data-namespace="team-a" data-cluster="east"`,
      ),
    );
    // Without namespaces known, no namespace filter.
    const plain = await open({ report, series: createQueueSeries({ backend: source.backend }) });
    expect((await plain.inject({ method: 'GET', url: '/' })).body).not.toContain('<select name="namespace">');
  });

  it('links each queue to its Grafana detail dashboard when a Grafana is configured', async () => {
    const a = await open({
      report,
      series: createQueueSeries({ backend: source.backend }),
      page: { grafanaUrl: 'https://grafana.example.com/sub/' },
    });
    const html = (await a.inject({ method: 'GET', url: '/' })).body;
    const pod = report.queues.find((q) => q.queue.name === 'pod');
    const href = /<a class="grafana" href="([^"]+)"/.exec(rowOf(html, pod?.id as string))?.[1] ?? '';
    const url = new URL(href.replace(/&amp;/g, '&'));
    expect(`${url.origin}${url.pathname}`).toBe(`https://grafana.example.com/sub/d/${DASHBOARD_UID.detail}`);
    // Every queue variable of the generated dashboard, named as the dashboard names it.
    const variables = queueVariables('m', false, {}).map((v) => v.build().name);
    expect([...url.searchParams.keys()].filter((k) => k.startsWith('var-'))).toEqual(variables.map((v) => `var-${v}`));
    expect(url.searchParams.get('var-job')).toBe('sim');
    expect(url.searchParams.get('var-instance')).toBe('mixed:8080');
    expect(url.searchParams.get('var-name')).toBe('pod');
    expect(url.searchParams.get('from')).toBe('now-30m');
    // Without a Grafana, no link.
    const plain = await open({ report, series: createQueueSeries({ backend: source.backend }) });
    expect((await plain.inject({ method: 'GET', url: '/' })).body).not.toContain('class="grafana"');
  });

  it('answers the charts of one queue at /queue-charts/{id}, as the page would carry them', async () => {
    const a = await open({ report, series: createQueueSeries({ backend: source.backend }) });
    const ok = report.queues.find((q) => q.status === 'ok');
    const response = await a.inject({ method: 'GET', url: `/queue-charts/${ok?.id}` });
    expect(response.statusCode).toBe(200);
    const body = response.json() as ChartPayload & { evaluatedAt: string };
    expect(body.evaluatedAt).toBe(report.evaluatedAt);
    expect(body.figures.map((f) => [f.key, f.group, f.title])).toEqual([
      [`${ok?.id}.0`, 'overview', 'Depth'],
      [`${ok?.id}.1`, 'overview', 'Adds and completions'],
    ]);
    expect(body.values[ok?.id as string]?.depth).toHaveLength(61);
    // A firing queue's: the same figures as inline in the page.
    const pod = report.queues.find((q) => q.queue.name === 'pod');
    const page = seriesJson((await a.inject({ method: 'GET', url: '/' })).body);
    const lazy = (await a.inject({ method: 'GET', url: `/queue-charts/${pod?.id}` })).json() as ChartPayload;
    expect(lazy.figures).toEqual(page.figures.filter((f) => f.queue === pod?.id));
    expect((await a.inject({ method: 'GET', url: '/queue-charts/nope~00000000' })).statusCode).toBe(404);
    const guarded = await open({ report, token: TOKEN, series: createQueueSeries({ backend: source.backend }) });
    expect((await guarded.inject({ method: 'GET', url: `/queue-charts/${ok?.id}` })).statusCode).toBe(401);
    const bearer = await guarded.inject({
      method: 'GET',
      url: `/queue-charts/${ok?.id}`,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(bearer.statusCode).toBe(200);
  });

  it('reads `grafana.url` from the file, WQD_GRAFANA_URL and --grafana-url, flags first', () => {
    const file = { path: 'c.yaml', text: 'grafana:\n  url: https://file.example\n' };
    expect(resolveServiceConfig({ flags: {}, env: {}, file }).grafanaUrl).toBe('https://file.example');
    expect(resolveServiceConfig({ flags: {}, env: { WQD_GRAFANA_URL: 'https://env.example' }, file }).grafanaUrl).toBe(
      'https://env.example',
    );
    expect(
      resolveServiceConfig({
        flags: { grafanaUrl: 'https://flag.example' },
        env: { WQD_GRAFANA_URL: 'https://env.example' },
      }).grafanaUrl,
    ).toBe('https://flag.example');
    expect(resolveServiceConfig({ flags: {}, env: {} }).grafanaUrl).toBeUndefined();
    expect(() => resolveServiceConfig({ flags: { grafanaUrl: 'grafana' }, env: {} })).toThrow(
      /^--grafana-url: invalid URL/,
    );
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

    // Another queue, another filter: the same computation. The page adds the signals its findings' charts draw,
    // once: a closed row's charts, fetched later, compute nothing more.
    const other = report.queues.find((q) => q.queue.name === 'dbuser')?.id as string;
    const filtered = await a.inject({ method: 'GET', url: `/api/v1/queues/${other}/series?signals=depth,addRate` });
    expect(Object.keys((filtered.json() as { series: object }).series)).toEqual(['depth', 'addRate']);
    expect(evaluations).toBe(SERIES_SIGNALS.length);
    expect((await a.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
    const perReport = SERIES_SIGNALS.length + signalsToExplain(report.queues).length;
    expect(signalsToExplain(report.queues).length).toBeGreaterThan(5);
    expect(evaluations).toBe(perReport);
    for (const queue of report.queues) await a.inject({ method: 'GET', url: `/queue-charts/${queue.id}` });
    expect(evaluations).toBe(perReport);

    // A new report: computed again, once.
    a.setReport({ ...report });
    await a.inject({ method: 'GET', url: `/api/v1/queues/${id}/series` });
    await a.inject({ method: 'GET', url: '/' });
    expect(evaluations).toBe(2 * perReport);
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
