/// <reference lib="dom" />
/**
 * The page at fleet scale: a synthetic report of 1,000 queues (100 processes of 10 queues, in 4 clusters and 20
 * namespaces), rendered by the page's own renderer with 30 minutes of synthetic chart data, then loaded in headless
 * Chromium (Debian's `chromium`) from a loopback server that serves it as the service does (the page, its assets,
 * and `/queue-charts/<id>` for a row opened later).
 *
 * Two fleets: a bad day (100 queues need attention: every row starts closed, one line each) and a quiet one
 * (20 need attention: their rows open, their charts inline). Findings are made by the rules' own texts from
 * synthetic signal values, so their sizes are the real ones.
 *
 * Printed per fleet: the HTML's bytes (raw, gzip at level 6 and brotli at quality 5, as the service compresses it),
 * the time to render it on the server, and in the browser (median of 5 loads, cache disabled): DOMContentLoaded,
 * first contentful paint, the script's `wqd-filtered` mark (filters read from the URL and applied: the list is
 * final) and `wqd-charts` (the first charts drawn), the time a keystroke in the search takes to filter the 1,000 rows,
 * and the time from opening a closed row to its first chart drawn (fetched from `/queue-charts/<id>`). Figures, not thresholds. Run: `npm run bench:page`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Browser } from 'puppeteer-core';
import { RULES } from '../src/diagnosis/catalog.js';
import { identityOf } from '../src/diagnosis/identity.js';
import {
  compareQueues,
  type Finding,
  type QueueReport,
  type QueueStatus,
  type Report,
} from '../src/diagnosis/report.js';
import { type DiagnosisRule, defaultThresholds, type SignalSnapshot } from '../src/diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL, runbookUrl } from '../src/diagnosis/runbook.js';
import { REPORTED_SIGNALS, SIGNALS } from '../src/diagnosis/signals.js';
import type { SignalValue } from '../src/diagnosis/units.js';
import { ASSETS_PREFIX, pageAssets } from '../src/server/page/assets.js';
import type { ChartData } from '../src/server/page/chart-data.js';
import { chartPayload, queueFigures } from '../src/server/page/chart-figures.js';
import { type PageSettings, queueContexts } from '../src/server/page/queue-context.js';
import { renderPage } from '../src/server/page/render.js';
import type { TargetsView } from '../src/service/target-status.js';
import { launchChromium } from '../test/support/chromium.js';

const QUEUES = 1000;
const QUEUES_PER_PROCESS = 10;
const LOADS = 5;
const STEP_MS = 30_000;
const POINTS = 61;
const EVALUATED_AT = Date.parse('2026-01-01T12:00:00Z');
const SETTINGS: PageSettings = {
  scope: { clusterLabel: 'cluster', namespaceLabel: 'namespace' },
  grafanaUrl: 'https://grafana.example.com',
};

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** A deterministic number in [0, 1) for a seed. */
function noise(seed: number): number {
  const x = Math.sin(seed * 12.9898) * 43758.5453;
  return x - Math.floor(x);
}

/** A plausible value of a signal, by its unit. */
function plausibleValue(unit: SignalValue['unit'], seed: number): number {
  const r = noise(seed);
  switch (unit) {
    case 'ratio':
      return r * 0.2;
    case 's':
      return 0.01 + r * 30;
    case '1/s':
      return r * 50;
    case 'items':
      return Math.round(r * 200);
    case 'workers':
      return Math.round(1 + r * 7);
  }
}

function snapshot(seed: number): SignalSnapshot {
  return Object.fromEntries(
    REPORTED_SIGNALS.map((s, i) => [s.id, { value: plausibleValue(s.unit, seed * 97 + i), unit: s.unit }] as const),
  );
}

/** A finding of `rule` as the engine writes it: its rule's own texts over the queue's signals. */
function findingOf(rule: DiagnosisRule, signals: SignalSnapshot, state: 'firing' | 'pending', seed: number): Finding {
  const thresholds = defaultThresholds(rule);
  const since = EVALUATED_AT - (state === 'pending' ? 60_000 + (seed % 3) * 60_000 : rule.forMs + (seed % 20) * 60_000);
  const evidence = Object.fromEntries([
    ...rule.evidence.map(
      (id) => [id, signals[id] ?? { value: null, unit: 'items', missing: 'metric_absent' }] as const,
    ),
    ...Object.entries(rule.derive?.(signals, thresholds) ?? {}),
  ]);
  const context = { signals, thresholds };
  return {
    rule: rule.id,
    severity: rule.severity,
    since: new Date(since).toISOString(),
    summary: rule.text.summary(context),
    evidence,
    cause: rule.text.cause(context),
    fix: rule.text.fix(context),
    runbook: runbookUrl(DEFAULT_RUNBOOK_BASE_URL, rule.id),
    state,
    ...(state === 'pending' ? { firesAt: new Date(since + rule.forMs).toISOString() } : {}),
  };
}

type Fleet = { readonly report: Report; readonly data: ChartData; readonly targets: TargetsView };

/** 1,000 queues, `attention` of them firing or pending (a tenth of those pending) and as many unknown. */
function fleet(attention: number): Fleet {
  const queueRules = RULES.filter((r) => r.scope === 'queue');
  const labels = new Map<string, Record<string, string>>();
  const queues: QueueReport[] = [];
  for (let i = 0; i < QUEUES; i++) {
    const process = Math.floor(i / QUEUES_PER_PROCESS);
    const queueLabels = {
      cluster: `cluster-${process % 4}`,
      namespace: `team-${process % 20}`,
      job: 'controllers',
      instance: `manager-${process}:8080`,
      controller: `kind${i % QUEUES_PER_PROCESS}-${process}`,
      name: `kind${i % QUEUES_PER_PROCESS}-${process}`,
    };
    const identity = identityOf(queueLabels);
    labels.set(identity.id, queueLabels);
    const signals = snapshot(i);
    let status: QueueStatus = 'ok';
    const findings: Finding[] = [];
    const unknown: QueueReport['unknown'][number][] = [];
    // Spread the queues needing attention (and the unknown ones) over the fleet.
    const slot = Math.floor((i * attention) / QUEUES);
    const leads = Math.floor(((i + 1) * attention) / QUEUES) > slot;
    if (leads) {
      const rule = queueRules[slot % queueRules.length] as DiagnosisRule;
      const pending = slot % 10 === 9;
      findings.push(findingOf(rule, signals, pending ? 'pending' : 'firing', i));
      if (slot % 4 === 0)
        findings.push(findingOf(queueRules[(slot + 1) % queueRules.length] as DiagnosisRule, signals, 'firing', i + 1));
      status = pending ? 'pending' : findings.some((f) => f.severity === 'critical') ? 'critical' : 'warning';
    } else if (Math.floor(((i + 500) * attention) / QUEUES) > Math.floor(((i + 499) * attention) / QUEUES)) {
      status = 'unknown';
      unknown.push({ rule: 'WorkqueuePersistentFailures', reason: "window 10m is shorter than the rule's range 15m" });
    }
    queues.push({
      id: identity.id,
      queue: { target: identity.target, name: identity.name, controller: identity.controller },
      status,
      findings,
      signals,
      observations: [],
      unknown,
    });
  }
  const report: Report = {
    evaluatedAt: new Date(EVALUATED_AT).toISOString(),
    window: '5m',
    queues: queues.sort(compareQueues),
    errors: [],
  };
  const timesMs = Array.from({ length: POINTS }, (_, k) => EVALUATED_AT - (POINTS - 1 - k) * STEP_MS);
  const signalIndex = new Map(SIGNALS.map((s, i) => [s.id, i]));
  const queueIndex = new Map(queues.map((q, i) => [q.id, i]));
  const data: ChartData = {
    timesMs,
    stepMs: STEP_MS,
    values: (queueId, signal) => {
      const q = queueIndex.get(queueId);
      const s = signalIndex.get(signal);
      if (q === undefined || s === undefined) return undefined;
      const base = plausibleValue(SIGNALS[s]?.unit ?? 'items', q * 131 + s);
      return timesMs.map(
        (_, k) => base * (0.6 + 0.4 * Math.sin((k + q) / 6)) + noise(q * 1000 + s * 61 + k) * base * 0.1,
      );
    },
    labels: (queueId) => labels.get(queueId),
  };
  const targets: TargetsView = {
    mode: 'scrape',
    targets: Array.from({ length: QUEUES / QUEUES_PER_PROCESS }, (_, p) => ({
      key: `pod/team-${p % 20}/manager-${p}:8080`,
      url: `http://10.0.${Math.floor(p / 250)}.${p % 250}:8080/metrics`,
      target: `controllers/manager-${p}:8080`,
      labels: { job: 'controllers', instance: `manager-${p}:8080`, namespace: `team-${p % 20}` },
      up: true,
      lastScrape: report.evaluatedAt,
      lastDurationSeconds: 0.02,
      samples: 2400,
      bytes: 300_000,
      consecutiveFailures: 0,
      skippedScrapes: 0,
      lastError: null,
      lastWarning: null,
    })),
  };
  return { report, data, targets };
}

type Measured = {
  domContentLoaded: number;
  firstContentfulPaint: number;
  filtered: number;
  charts: number | undefined;
  searchKeystroke: number;
  openRowToCharts: number;
};

async function measure(browser: Browser, { report, data, targets }: Fleet, html: string): Promise<Measured[]> {
  const assets = pageAssets();
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const asset = path.startsWith(`${ASSETS_PREFIX}/`)
      ? assets.byName.get(path.slice(ASSETS_PREFIX.length + 1))
      : undefined;
    if (path === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    } else if (asset !== undefined) {
      response.writeHead(200, { 'content-type': asset.contentType }).end(asset.bytes);
    } else if (path.startsWith('/queue-charts/')) {
      const queue = report.queues.find((q) => q.id === decodeURIComponent(path.slice('/queue-charts/'.length)));
      const [context] = queue === undefined ? [] : queueContexts([queue], SETTINGS, targets, data);
      const body =
        context === undefined
          ? { times: [], figures: [], values: {} }
          : chartPayload(queueFigures(context, data), data);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const runs: Measured[] = [];
  try {
    for (let i = 0; i < LOADS; i++) {
      const page = await browser.newPage();
      await page.setCacheEnabled(false);
      await page.setViewport({ width: 1400, height: 900 });
      await page.goto(`${origin}/`, { waitUntil: 'load' });
      await page.waitForFunction(() => performance.getEntriesByName('wqd-filtered').length > 0);
      const hasOpenCharts = await page.$('details.queue[open] figure.chart');
      if (hasOpenCharts !== null)
        await page.waitForFunction(() => performance.getEntriesByName('wqd-charts').length > 0);
      // No named functions inside: tsx would wrap them in a helper the page does not have.
      const timing = await page.evaluate(() => ({
        domContentLoaded: (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming)
          .domContentLoadedEventEnd,
        firstContentfulPaint: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN,
        filtered: performance.getEntriesByName('wqd-filtered')[0]?.startTime ?? Number.NaN,
        charts: performance.getEntriesByName('wqd-charts')[0]?.startTime,
      }));
      const searchKeystroke = await page.evaluate(() => {
        const input = document.querySelector('input[name=q]') as HTMLInputElement;
        input.value = 'kind3';
        const start = performance.now();
        input.dispatchEvent(new Event('input', { bubbles: true }));
        return performance.now() - start;
      });
      await page.evaluate(() => {
        const input = document.querySelector('input[name=q]') as HTMLInputElement;
        input.value = '';
        input.dispatchEvent(new Event('input', { bubbles: true }));
      });
      const closed = await page.$eval('details.queue:not([open])', (row) => row.id);
      const start = await page.evaluate(() => performance.now());
      await page.$eval(`details[id="${closed}"] > summary`, (s) => {
        s.scrollIntoView();
        (s as HTMLElement).click();
      });
      await page.waitForFunction(
        (id: string) => {
          // The charts in view are drawn; those further down when scrolled to.
          return document.querySelector(`details[id="${id}"] figure.chart.drawn`) !== null;
        },
        {},
        closed,
      );
      const openRowToCharts = (await page.evaluate(() => performance.now())) - start;
      runs.push({ ...timing, searchKeystroke, openRowToCharts });
      await page.close();
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return runs;
}

const kib = (n: number): string => `${(n / 1024).toFixed(1)} KiB`;
const ms = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? '–' : `${n.toFixed(0)} ms`);

const browser = await launchChromium();
try {
  for (const [title, attention] of [
    ['bad day: 100 of 1,000 queues need attention (all rows closed)', 100],
    ['quiet day: 20 of 1,000 queues need attention (their rows open, charts inline)', 20],
  ] as const) {
    const f = fleet(attention);
    const renders: number[] = [];
    let html = '';
    for (let i = 0; i < LOADS; i++) {
      const start = performance.now();
      html = renderPage({
        report: f.report,
        targets: f.targets,
        charts: f.data,
        refreshSeconds: 15,
        signOut: false,
        assets: pageAssets(),
        settings: SETTINGS,
      });
      renders.push(performance.now() - start);
    }
    const bytes = Buffer.byteLength(html);
    const gzip = gzipSync(html, { level: 6 }).length;
    const brotli = brotliCompressSync(html, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }).length;
    const runs = await measure(browser, f, html);
    const pick = (key: keyof Measured): number | undefined => {
      const values = runs.map((r) => r[key]).filter((v): v is number => v !== undefined && !Number.isNaN(v));
      return values.length === 0 ? undefined : median(values);
    };
    const statuses = f.report.queues.reduce<Record<string, number>>((acc, q) => {
      acc[q.status] = (acc[q.status] ?? 0) + 1;
      return acc;
    }, {});
    process.stdout.write(
      [
        `page, ${title}`,
        `  statuses: ${Object.entries(statuses)
          .map(([s, n]) => `${n} ${s}`)
          .join(', ')}`,
        `  weight: ${kib(bytes)} HTML, ${kib(gzip)} gzip, ${kib(brotli)} brotli (assets apart: served once, cached for a year)`,
        `  server render: ${ms(median(renders))} (median of ${LOADS})`,
        `  Chromium, 1,400 px, median of ${LOADS} loads: DOMContentLoaded ${ms(pick('domContentLoaded'))}, first contentful paint ${ms(
          pick('firstContentfulPaint'),
        )}, list filtered ${ms(pick('filtered'))}, first charts drawn ${ms(pick('charts'))}`,
        `  search keystroke over 1,000 rows: ${ms(pick('searchKeystroke'))}; closed row opened to its first chart drawn: ${ms(
          pick('openRowToCharts'),
        )}`,
        '',
      ].join('\n'),
    );
  }
} finally {
  await browser.close();
}
