/// <reference lib="dom" />
/**
 * The page's layout and controls in headless Chromium (Debian's `chromium` through puppeteer-core), on a fleet
 * made from the `mixed` scenario (simulated and diagnosed; its recording is the charts' backend) with one queue
 * made pending (its hot loop three minutes from firing), one unknown (with why), and namespaces and clusters on
 * its series:
 * - at 360, 390 and 1,400 px nothing scrolls sideways, every row open and its charts drawn;
 * - the filters are form controls that work and live in the URL: a URL with filters opens filtered;
 * - pending and unknown show their reasons, each status in its own colour with its word;
 * - a finding's chart carries its rule's threshold line and its onset marker;
 * - rows open from the keyboard; text and badges meet WCAG AA contrast.
 * The app listens on 127.0.0.1 only and is closed, with the browser, after the tests.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ruleSettings } from '../../src/diagnosis/catalog.js';
import { compareQueues, type QueueReport, type Report } from '../../src/diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { DASHBOARD_UID } from '../../src/generate/defaults.js';
import { buildApp } from '../../src/server/app.js';
import { STATUS_COLORS } from '../../src/server/page/palette.js';
import { rulesView } from '../../src/server/rules-view.js';
import { createQueueSeries, type QueueSeries } from '../../src/service/queue-series.js';
import { createServiceMetrics } from '../../src/service/service-metrics.js';
import type { MetricsSource } from '../../src/sources/source.js';
import { launchChromium } from '../support/chromium.js';
import { mixedReportAtEnd } from '../support/mixed-report.js';
import { SCRAPE_TARGETS } from './helpers.js';

const GRAFANA = 'https://grafana.example.com';
const UNKNOWN_REASON = "window 4m is shorter than the rule's range 15m (range 15m + for 15m before it can fire)";
const NAMESPACE: Readonly<Record<string, string>> = { dbuser: 'team-a', pod: 'team-a' };
const CLUSTER: Readonly<Record<string, string>> = { volumesnapshot: 'west' };

let source: MetricsSource;
let app: FastifyInstance | undefined;
let browser: Browser | undefined;
let origin: string;
let report: Report;

/** The diagnosed report with the hot loop pending (three minutes from firing) and the healthy queue unknown. */
function fleetOf(diagnosed: Report): Report {
  const at = Date.parse(diagnosed.evaluatedAt);
  const iso = (ms: number): string => new Date(ms).toISOString();
  const queues = diagnosed.queues.map((q): QueueReport => {
    if (q.queue.name === 'ingress-status') {
      return {
        ...q,
        status: 'pending',
        findings: q.findings.map((f) => ({
          ...f,
          state: 'pending',
          since: iso(at - 2 * 60_000),
          firesAt: iso(at + 3 * 60_000),
        })),
      };
    }
    if (q.status === 'ok') {
      return {
        ...q,
        status: 'unknown',
        unknown: [
          { rule: 'WorkqueuePersistentFailures', reason: UNKNOWN_REASON },
          { rule: 'WorkqueueBacklog', reason: 'too few scrapes: the depth (average) has no value yet' },
        ],
      };
    }
    return q;
  });
  return { ...diagnosed, queues: [...queues].sort(compareQueues) };
}

beforeAll(async () => {
  const mixed = await mixedReportAtEnd();
  source = mixed.source;
  report = fleetOf(mixed.report);
  // The scenario's one target has no namespace or cluster: its queues' series get some.
  const real = createQueueSeries({ backend: source.backend });
  const nameOf = new Map(report.queues.map((q) => [q.id, q.queue.name ?? '']));
  const series: QueueSeries = {
    async forReport(r) {
      const set = await real.forReport(r);
      const placed = [...set.labels].map(([id, labels]) => {
        const name = nameOf.get(id) ?? '';
        return [id, { ...labels, namespace: NAMESPACE[name] ?? 'team-b', cluster: CLUSTER[name] ?? 'east' }] as const;
      });
      return { ...set, labels: new Map(placed) };
    },
    signalsFor: (r, signals) => real.signalsFor(r, signals),
  };
  app = await buildApp({
    report: () => report,
    ready: () => true,
    targets: () => SCRAPE_TARGETS,
    rules: rulesView({}, DEFAULT_RUNBOOK_BASE_URL),
    metrics: createServiceMetrics({ processMetrics: false }).registry,
    series,
    page: { scope: { clusterLabel: 'cluster', namespaceLabel: 'namespace' }, grafanaUrl: GRAFANA },
    // No refresh while the tests read the page.
    evaluationIntervalMs: 3_600_000,
    version: '0.0.0-test',
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await source?.close();
});

async function openPage(width: number, path = '/', height = 900): Promise<Page> {
  const page = await (browser as Browser).newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push((error as Error).message));
  await page.setViewport({ width, height });
  await page.goto(`${origin}${path}`, { waitUntil: 'networkidle0' });
  expect(problems).toEqual([]);
  return page;
}

/** The names of the rows shown (not filtered out). */
function shownRows(page: Page): Promise<string[]> {
  return page.$$eval('details.queue', (rows) =>
    rows.filter((r) => !(r as HTMLElement).hidden).map((r) => r.querySelector('summary h2')?.textContent ?? ''),
  );
}

const rowOf = (name: string): string => `details[id="q-${report.queues.find((q) => q.queue.name === name)?.id}"]`;

type Overflow = { scrollWidth: number; clientWidth: number; wider: string[] };

/** How wide the page is against its viewport, and the first elements that reach past it. */
function overflow(page: Page): Promise<Overflow> {
  return page.evaluate(() => {
    const root = document.scrollingElement as Element;
    const wider = [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > root.clientWidth + 0.5)
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className}`);
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wider };
  });
}

/**
 * Opens every row, then scrolls the page through so that every chart is drawn, reading the overflow at each
 * step: rows out of view are not laid out (`content-visibility`), so each part is measured while in view.
 */
async function openEverythingAndDraw(page: Page): Promise<Overflow[]> {
  await page.$$eval('details.queue', (rows) => {
    for (const row of rows) (row as HTMLDetailsElement).open = true;
  });
  await page.waitForFunction(() => document.querySelectorAll('.charts[data-lazy]').length === 0, { timeout: 20_000 });
  const seen: Overflow[] = [];
  for (let y = 0; y < (await page.evaluate(() => document.scrollingElement?.scrollHeight ?? 0)); y += 600) {
    await page.evaluate((top: number) => window.scrollTo(0, top), y);
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('figure.chart')]
          .filter((f) => {
            const box = f.getBoundingClientRect();
            return box.bottom > 0 && box.top < window.innerHeight;
          })
          .every((f) => f.classList.contains('drawn')),
      { timeout: 20_000 },
    );
    seen.push(await overflow(page));
  }
  return seen;
}

describe('the page at 360, 390 and 1,400 px', () => {
  it.each([360, 390, 1400])(
    'never scrolls sideways at %i px, every row open and its charts drawn',
    async (width) => {
      const page = await openPage(width);
      try {
        const steps = [await overflow(page), ...(await openEverythingAndDraw(page))];
        for (const step of steps) {
          expect(step.wider).toEqual([]);
          expect(step.scrollWidth).toBeLessThanOrEqual(step.clientWidth);
        }
        expect(await page.$$eval('figure.chart.drawn', (f) => f.length)).toBeGreaterThan(10);
      } finally {
        await page.close();
      }
    },
    120_000,
  );
});

describe('the filters at 1,400 px', () => {
  it('open a URL with filters already applied', async () => {
    const pending = await openPage(1400, '/?status=pending');
    try {
      expect(await shownRows(pending)).toEqual(['ingress-status']);
      expect(await pending.$eval('input[name=status][value=pending]', (b) => (b as HTMLInputElement).checked)).toBe(
        true,
      );
      expect(await pending.$eval('#shown', (p) => p.textContent)).toBe('Showing 1 of 5 queues.');
      expect(await pending.$eval('form.filters', (f) => (f as HTMLElement).hidden)).toBe(false);
    } finally {
      await pending.close();
    }
    const placed = await openPage(1400, '/?namespace=team-a&q=DB');
    try {
      expect(await shownRows(placed)).toEqual(['dbuser']);
      expect(await placed.$eval('select[name=namespace]', (s) => (s as HTMLSelectElement).value)).toBe('team-a');
      expect(await placed.$eval('input[name=q]', (i) => (i as HTMLInputElement).value)).toBe('DB');
    } finally {
      await placed.close();
    }
    const ruled = await openPage(1400, '/?rule=WorkqueueBacklog&cluster=east&status=firing&status=unknown');
    try {
      expect(await shownRows(ruled)).toEqual(['pod']);
    } finally {
      await ruled.close();
    }
  }, 60_000);

  it('filter as they change and keep the view in the URL', async () => {
    const page = await openPage(1400);
    try {
      expect(await shownRows(page)).toHaveLength(5);
      // The page replaces its URL as the filters change; the browser tells the driver a moment later, so the
      // page's own location is read, once it shows the change.
      const searchBecomes = (search: string) =>
        page.waitForFunction((expected) => location.search === expected, { timeout: 10_000 }, search);
      await page.click('input[name=status][value=firing]');
      await searchBecomes('?status=firing');
      expect(await shownRows(page)).toEqual(['dbuser', 'pod', 'volumesnapshot']);
      await page.select('select[name=cluster]', 'west');
      await searchBecomes('?status=firing&cluster=west');
      expect(await shownRows(page)).toEqual(['volumesnapshot']);
      await page.select('select[name=cluster]', '');
      // The search reads what the row says: here a word of the hot loop's summary, beside the firing queues.
      await page.click('input[name=status][value=pending]');
      await page.type('input[name=q]', 'API writes');
      await page.waitForFunction(() => new URL(location.href).searchParams.get('q') === 'API writes', {
        timeout: 10_000,
      });
      expect(await shownRows(page)).toEqual(['ingress-status']);
      await page.type('input[name=q]', ' nothing-like-this');
      expect(await shownRows(page)).toEqual([]);
      expect(await page.$eval('.fleet-list .none', (p) => (p as HTMLElement).hidden)).toBe(false);
      // The link shares the view: opened anew, it shows the same.
      await page.waitForFunction(
        () => new URL(location.href).searchParams.get('q') === 'API writes nothing-like-this',
        {
          timeout: 10_000,
        },
      );
      const shared = await openPage(1400, await page.evaluate(() => location.search));
      expect(await shownRows(shared)).toEqual([]);
      await shared.close();
      await page.click('form.filters button[type=reset]');
      await page.waitForFunction(() => location.search === '');
      expect(await shownRows(page)).toHaveLength(5);
    } finally {
      await page.close();
    }
  }, 60_000);
});

describe('states, charts and access', () => {
  it('shows pending with when it fires and unknown with why, each in its own colour and word', async () => {
    const page = await openPage(1400);
    try {
      const row = (name: string) =>
        page.$eval(rowOf(name), (r) => ({
          status: r.querySelector('summary .badge')?.getAttribute('data-status'),
          word: (r.querySelector('summary .badge')?.textContent ?? '').replace(/^\W+/, ''),
          colour: getComputedStyle(r.querySelector('summary .badge') as Element).backgroundColor,
          summary: (r.querySelector('summary')?.textContent ?? '').replace(/\s+/g, ' '),
          body: (r.querySelector('.body')?.textContent ?? '').replace(/\s+/g, ' '),
          open: (r as HTMLDetailsElement).open,
        }));
      const pending = await row('ingress-status');
      expect(pending).toMatchObject({ status: 'pending', word: 'pending', open: true });
      expect(pending.body).toMatch(
        /pending: fires at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC if it keeps holding \(in 3m\)/,
      );
      // Closed, its line says when it fires. Clicked inside the page in one step: a refresh may re-render the row
      // between finding its summary and clicking it from outside.
      await page.$eval(`${rowOf('ingress-status')} > summary`, (summary) => (summary as HTMLElement).click());
      expect((await row('ingress-status')).summary).toMatch(/pending, fires in 3m: \d+(\.\d+)?\/s added/);
      const unknown = await row('deployment');
      expect(unknown).toMatchObject({ status: 'unknown', word: 'unknown', open: false });
      expect(unknown.summary).toContain(
        `Not judged: Work queue persistent failures: ${UNKNOWN_REASON} (and 1 more rules)`,
      );
      expect(unknown.body).toContain(
        `Not judged rules without the data they need yet WorkqueuePersistentFailures: ${UNKNOWN_REASON}`,
      );
      expect(unknown.body).toContain('WorkqueueBacklog: too few scrapes');
      const warning = await row('pod');
      const colours = new Set([pending.colour, unknown.colour, warning.colour]);
      expect(colours.size).toBe(3);
      // The legend names every status, critical and warning apart, each with its icon and word.
      const legend = await page.$$eval('ul.legend .badge', (badges) =>
        badges.map((b) => [
          b.getAttribute('data-status'),
          b.querySelector('.icon')?.textContent,
          getComputedStyle(b).backgroundColor,
        ]),
      );
      expect(legend.map(([s]) => s)).toEqual(['critical', 'warning', 'pending', 'unknown', 'standby', 'ok']);
      expect(new Set(legend.map(([, icon]) => icon)).size).toBe(6);
      expect(new Set(legend.map(([, , colour]) => colour)).size).toBe(6);
    } finally {
      await page.close();
    }
  }, 60_000);

  it("draws a finding's threshold line and onset marker, and links the queue's Grafana dashboard", async () => {
    const page = await openPage(1400, '/', 8000);
    try {
      const chart = (name: string) =>
        page
          .waitForFunction(
            (selector: string) => {
              const figure = document.querySelector(`${selector} article.finding figure.chart.drawn`) as
                | (HTMLElement & {
                    wqd?: {
                      plot: { series: { label: string }[]; data: number[][]; axes: { label?: string }[] };
                      markers: string[];
                    };
                  })
                | null;
              if (figure?.wqd === undefined) return undefined;
              const canvas = figure.querySelector('canvas') as HTMLCanvasElement;
              const pixels = (canvas.getContext('2d') as CanvasRenderingContext2D).getImageData(
                0,
                0,
                canvas.width,
                canvas.height,
              ).data;
              const colours = new Set<string>();
              for (let i = 0; i < pixels.length; i += 4) {
                if ((pixels[i + 3] ?? 0) > 200)
                  colours.add(
                    `#${[pixels[i], pixels[i + 1], pixels[i + 2]].map((c) => (c ?? 0).toString(16).padStart(2, '0')).join('')}`,
                  );
              }
              const { plot, markers } = figure.wqd;
              return {
                labels: plot.series.map((s) => s.label),
                data: plot.data.map((column) => [...column]),
                unit: plot.axes[1]?.label,
                markers,
                colours: [...colours],
              };
            },
            { timeout: 20_000 },
            rowOf(name),
          )
          .then(
            (handle) =>
              handle.jsonValue() as Promise<{
                labels: string[];
                data: (number | null)[][];
                unit: string;
                markers: string[];
                colours: string[];
              }>,
          );

      // The pending hot loop: its add-rate threshold (the rule's, in force) as a line, the onset and the time it fires.
      const minAddRate = ruleSettings({}).find((s) => s.rule.id === 'WorkqueueHotLoop')?.thresholds.minAddRate;
      const loop = await chart('ingress-status');
      expect(loop.labels.slice(1, 3)).toEqual(['Add rate (median)', 'API write rate (median)']);
      const line = loop.labels.indexOf(`threshold minAddRate ≥ ${minAddRate}/s`);
      expect(line).toBeGreaterThan(0);
      expect(new Set(loop.data[line])).toEqual(new Set([minAddRate]));
      expect(loop.unit).toBe('per second');
      expect(loop.markers).toEqual(['onset', 'fired']);
      // The x axis reaches the time it fires, three minutes after the evaluation.
      expect(loop.data[0]?.at(-1)).toBe(Date.parse(report.evaluatedAt) / 1000 + 180);
      expect(loop.colours).toContain(STATUS_COLORS.pending);
      expect(loop.colours).toContain(STATUS_COLORS.warning);
      // A firing finding: its evidence and both markers (its thresholds are ratios, not drawn on a chart of rates).
      const failures = await chart('dbuser');
      expect(failures.labels).toContain('Reconcile error rate');
      expect(failures.labels.some((l) => l.startsWith('threshold '))).toBe(false);
      expect(failures.markers).toEqual(['onset', 'fired']);

      const href = await page.$eval(`${rowOf('pod')} a.grafana`, (a) => a.getAttribute('href') ?? '');
      const url = new URL(href);
      expect(`${url.origin}${url.pathname}`).toBe(`${GRAFANA}/d/${DASHBOARD_UID.detail}`);
      expect(Object.fromEntries([...url.searchParams].filter(([k]) => k.startsWith('var-')))).toEqual({
        'var-cluster': 'east',
        'var-namespace': 'team-a',
        'var-job': 'sim',
        'var-instance': 'mixed:8080',
        'var-controller': 'pod',
        'var-name': 'pod',
      });
    } finally {
      await page.close();
    }
  }, 60_000);

  it('opens a row from the keyboard and draws its charts', async () => {
    const page = await openPage(1400);
    try {
      // From the last filter control, Tab reaches the first row.
      await page.focus('form.filters button[type=reset]');
      await page.keyboard.press('Tab');
      const first = await page.evaluate(() => document.activeElement?.parentElement?.querySelector('h2')?.textContent);
      expect(first).toBe(report.queues[0]?.queue.name);
      await page.focus(`${rowOf('deployment')} > summary`);
      await page.keyboard.press('Enter');
      // Its charts are fetched, then drawn once in view.
      await page.waitForSelector(`${rowOf('deployment')} figure.chart`, { timeout: 20_000 });
      await page.$eval(`${rowOf('deployment')} figure.chart`, (f) => f.scrollIntoView());
      await page.waitForFunction(
        (selector: string) => {
          const figures = [...document.querySelectorAll(`${selector} figure.chart`)];
          return figures.length > 0 && figures.every((f) => f.classList.contains('drawn'));
        },
        { timeout: 20_000 },
        rowOf('deployment'),
      );
      await page.keyboard.press('Enter');
      expect(await page.$eval(rowOf('deployment'), (r) => (r as HTMLDetailsElement).open)).toBe(false);
    } finally {
      await page.close();
    }
  }, 60_000);

  it('meets WCAG AA contrast for its text and badges', async () => {
    const page = await openPage(1400);
    try {
      const failures = await page.evaluate(() => {
        const rgb = (css: string): number[] => (css.match(/[\d.]+/g) ?? []).map(Number);
        const luminance = ([r, g, b]: number[]): number => {
          const linear = [r, g, b].map((c) => {
            const v = (c ?? 0) / 255;
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
          });
          return 0.2126 * (linear[0] ?? 0) + 0.7152 * (linear[1] ?? 0) + 0.0722 * (linear[2] ?? 0);
        };
        const background = (e: Element | null): number[] => {
          for (let el = e; el !== null; el = el.parentElement) {
            const colour = rgb(getComputedStyle(el).backgroundColor);
            if (colour.length === 3 || (colour[3] ?? 0) > 0) return colour.slice(0, 3);
          }
          return [255, 255, 255];
        };
        const out: string[] = [];
        const texts = [...document.querySelectorAll('body *')].filter((e) =>
          [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').trim() !== ''),
        );
        for (const e of texts) {
          if ((e as HTMLElement).offsetParent === null) continue;
          const fg = luminance(rgb(getComputedStyle(e).color));
          const bg = luminance(background(e));
          const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
          if (ratio < 4.5) out.push(`${e.tagName.toLowerCase()}.${e.className}: ${ratio.toFixed(2)}`);
        }
        return out;
      });
      expect(failures).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);
});
