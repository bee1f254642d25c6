/// <reference lib="dom" />
/**
 * The page in headless Chromium (Debian's `chromium` through puppeteer-core), against the real service in
 * demo mode on 127.0.0.1 with an API token: the sign-in form and its session cookie, every queue with its
 * status, findings (summary, cause, fix, runbook link) and observations as the API reports them, the targets'
 * health, charts that are drawn (coloured line pixels on every canvas), a closed row's charts fetched and drawn
 * when it is opened (and kept open across refreshes), the page refreshing itself, the page read with JavaScript
 * disabled, and 401 without the token.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import type { TargetsView } from '../../src/service/target-status.js';
import { launchChromium } from '../support/chromium.js';
import { waitFor } from '../support/local-server.js';

const TOKEN = 'page-test-token-0123456789';
let dir: string;
let server: RunningServer | undefined;
let browser: Browser | undefined;
let origin: string;
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'wqd-page-'));
  await writeFile(join(dir, 'token'), `${TOKEN}\n`);
  const config = resolveServiceConfig({
    flags: { demo: true, listen: '127.0.0.1:0', apiTokenFile: join(dir, 'token'), evaluationInterval: '3s' },
    env: {},
  });
  server = await startServer(config, { logger: pino({ level: 'silent' }), processMetrics: false, announce: () => {} });
  origin = server.origin;
  await waitFor('the first report', async () => (await fetch(`${origin}/readyz`)).status === 200, 60_000);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function apiReport(): Promise<Report> {
  return (await (await fetch(`${origin}/api/v1/diagnosis`, { headers: auth })).json()) as Report;
}

/** What the page shows, read in one go (the page may swap its content between two reads). */
type PageView = {
  evaluatedAt: string;
  queues: Array<{
    id: string;
    name: string;
    status: string;
    findings: Array<{ rule: string; summary: string; cause: string; fix: string; runbook: string | null }>;
    observations: string[];
    charts: number;
  }>;
  targets: string[];
  text: string;
};

function readView(): PageView {
  const text = (el: Element | null): string => (el?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const main = document.querySelector('main') as HTMLElement;
  return {
    evaluatedAt: main.dataset.evaluatedAt ?? '',
    queues: [...document.querySelectorAll('details.queue')].map((q) => ({
      id: q.id.replace(/^q-/, ''),
      name: text(q.querySelector('summary h2')),
      status: q.querySelector('summary .badge')?.getAttribute('data-status') ?? '',
      findings: [...q.querySelectorAll('article.finding')].map((f) => ({
        rule: f.getAttribute('data-rule') ?? '',
        summary: text(f.querySelector('.summary')),
        cause: text(f.querySelector('.cause')),
        fix: text(f.querySelector('.fix')),
        runbook: f.querySelector('a.runbook')?.getAttribute('href') ?? null,
      })),
      observations: [...q.querySelectorAll('ul.observations li strong')].map((o) => text(o)),
      charts: q.querySelectorAll('figure.chart').length,
    })),
    targets: [...document.querySelectorAll('section.targets tbody tr')].map((r) => text(r)),
    text: text(document.body),
  };
}

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** Checks the page's content against the API's report of the same evaluation. */
function expectMatchesReport(view: PageView, report: Report, targets: TargetsView): void {
  expect(view.queues.map((q) => q.id)).toEqual(report.queues.map((q) => q.id));
  for (const [i, queue] of report.queues.entries()) {
    const shown = view.queues[i];
    expect(shown?.name).toBe(queue.queue.name ?? queue.queue.target);
    expect(shown?.status).toBe(queue.status);
    expect(shown?.findings).toEqual(
      queue.findings.map((f) => ({
        rule: f.rule,
        summary: squash(f.summary),
        cause: squash(f.cause),
        fix: squash(f.fix),
        runbook: f.runbook,
      })),
    );
    expect(shown?.observations).toEqual(queue.observations.map((o) => o.id));
  }
  if (targets.mode !== 'scrape') throw new Error('expected scrape mode');
  expect(view.targets).toHaveLength(targets.targets.length);
  for (const [i, target] of targets.targets.entries()) {
    expect(view.targets[i]).toContain(target.target);
    expect(view.targets[i]).toContain(target.up ? 'up' : 'down');
  }
}

describe('the page in Chromium', () => {
  it('answers 401 without the token, on the page and on the series', async () => {
    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(401);
    expect(page.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(await page.text()).toContain('name="token"');
    expect((await fetch(`${origin}/`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(`${origin}/api/v1/diagnosis`)).status).toBe(401);
    const report = await apiReport();
    const id = report.queues[0]?.id ?? '';
    expect((await fetch(`${origin}/api/v1/queues/${id}/series`)).status).toBe(401);
    expect((await fetch(`${origin}/api/v1/queues/${id}/series`, { headers: auth })).status).toBe(200);
    const wrong = await fetch(`${origin}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'token=not-it',
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(await wrong.text()).toContain('not the token');
    for (const open of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${origin}${open}`)).status).toBe(200);
  });

  it('signs in, shows every queue, finding and target as the API does, and draws the charts', async () => {
    const page = await (browser as Browser).newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${(error as Error).message}`));
    page.on('console', (message) => {
      // The sign-in page is a 401 on purpose; anything else the console reports is a problem.
      if (message.type() === 'error' && !message.text().includes('401')) problems.push(message.text());
    });
    try {
      // Tall enough for every chart of the open rows to be in view at once (charts are drawn when in view).
      await page.setViewport({ width: 1280, height: 8000 });
      const first = await page.goto(`${origin}/`);
      expect(first?.status()).toBe(401);
      await page.type('#token', TOKEN);
      await Promise.all([page.waitForNavigation(), page.click('form.login button[type=submit]')]);
      const cookies = await page.cookies();
      expect(cookies.find((c) => c.name === 'wqd_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      expect(cookies.some((c) => c.value.includes(TOKEN))).toBe(false);

      await page.waitForFunction(
        () => {
          const figures = [...document.querySelectorAll('figure.chart')];
          return figures.length > 0 && figures.every((f) => f.classList.contains('drawn') && f.querySelector('canvas'));
        },
        { timeout: 20_000 },
      );

      // The page and the API agree on one evaluation (one may be an evaluation ahead: read both again).
      const matched = await waitFor(
        'the page and the API at the same evaluation',
        async () => {
          const view = await page.evaluate(readView);
          const report = await apiReport();
          const targets = (await (await fetch(`${origin}/api/v1/targets`, { headers: auth })).json()) as TargetsView;
          return view.evaluatedAt === report.evaluatedAt ? { view, report, targets } : undefined;
        },
        20_000,
        200,
      );
      const { view, report, targets } = matched;
      expectMatchesReport(view, report, targets);
      expect(view.queues.map((q) => q.name).sort()).toEqual([
        'dbuser',
        'deployment',
        'ingress-status',
        'pod',
        'volumesnapshot',
      ]);
      const rules = view.queues.flatMap((q) => q.findings.map((f) => f.rule));
      for (const rule of ['WorkqueueHotLoop', 'WorkqueueBacklog', 'WorkqueuePersistentFailures', 'WorkqueueSlowWork'])
        expect(rules).toContain(rule);
      expect(view.queues.find((q) => q.name === 'deployment')?.status).toBe('ok');
      for (const queue of view.queues.filter((q) => q.findings.length > 0))
        expect(queue.charts, queue.name).toBeGreaterThan(0);
      expect(view.text).toContain('Sign out');

      // The ok queue is one closed line; opened, it fetches its charts and draws them, and stays open.
      const ok = `details[id="q-${view.queues.find((q) => q.name === 'deployment')?.id}"]`;
      expect(await page.$eval(ok, (row) => (row as HTMLDetailsElement).open)).toBe(false);
      await page.click(`${ok} > summary`);
      await page.waitForFunction(
        (selector: string) => {
          const figures = [...document.querySelectorAll(`${selector} figure.chart`)];
          return figures.length === 2 && figures.every((f) => f.classList.contains('drawn'));
        },
        { timeout: 20_000 },
        ok,
      );

      // Every chart's canvas holds pixels of its lines' colours (uPlot draws axes and grid in grey).
      const drawn = await page.evaluate(() =>
        [...document.querySelectorAll('figure.chart')].map((figure) => {
          const canvas = figure.querySelector('canvas') as HTMLCanvasElement;
          const pixels = (canvas.getContext('2d') as CanvasRenderingContext2D).getImageData(
            0,
            0,
            canvas.width,
            canvas.height,
          ).data;
          let line = 0;
          let painted = 0;
          for (let i = 0; i < pixels.length; i += 4) {
            const [r, g, b, a] = [pixels[i] ?? 0, pixels[i + 1] ?? 0, pixels[i + 2] ?? 0, pixels[i + 3] ?? 0];
            if (a > 0) painted++;
            // Axes, grid and labels are grey; the lines are coloured.
            if (a > 128 && Math.max(r, g, b) - Math.min(r, g, b) > 80) line++;
          }
          return {
            chart: `${figure.getAttribute('data-queue')} ${figure.getAttribute('data-chart')}`,
            line,
            painted,
          };
        }),
      );
      expect(drawn.length).toBeGreaterThan(5);
      for (const chart of drawn) {
        expect(chart.line, chart.chart).toBeGreaterThan(20);
        expect(chart.painted, chart.chart).toBeGreaterThan(chart.line);
      }

      // The page refreshes itself: a later evaluation replaces the content in place, charts drawn again.
      await page.evaluate(() => {
        (window as unknown as { stayed: boolean }).stayed = true;
      });
      await page.waitForFunction(
        (before: string) => {
          const main = document.querySelector('main');
          const figures = [...document.querySelectorAll('figure.chart')];
          return (
            main?.dataset.evaluatedAt !== before &&
            figures.length > 0 &&
            figures.every((f) => f.classList.contains('drawn'))
          );
        },
        { timeout: 20_000 },
        view.evaluatedAt,
      );
      expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
      expect(await page.$eval(ok, (row) => (row as HTMLDetailsElement).open)).toBe(true);

      // Signing out ends the session.
      await Promise.all([page.waitForNavigation(), page.click('header.top form button')]);
      expect(await page.$('#token')).not.toBeNull();
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('reads in full without JavaScript', async () => {
    const page = await (browser as Browser).newPage();
    try {
      await page.setJavaScriptEnabled(false);
      await page.setExtraHTTPHeaders(auth);
      const response = await page.goto(`${origin}/`);
      expect(response?.status()).toBe(200);
      const html = await page.content();
      const report = await apiReport();
      for (const queue of report.queues) expect(html).toContain(`id="q-${queue.id}"`);
      for (const name of ['dbuser', 'deployment', 'ingress-status', 'pod', 'volumesnapshot'])
        expect(html).toContain(name);
      for (const rule of ['WorkqueueHotLoop', 'WorkqueueBacklog', 'WorkqueuePersistentFailures'])
        expect(html).toContain(rule);
      expect(html).toContain('Cause');
      expect(html).toContain('Fix');
      expect(html).toMatch(/<a class="runbook" href="https:\/\/[^"]+WorkqueueHotLoop\.md"/);
      expect(html).toContain('Targets');
      expect(html).toMatch(/<span class="badge up">up<\/span>/);
      // Without the script the charts' places list the values, and a meta refresh reloads the page.
      expect(html).not.toContain('<canvas');
      expect(html).toMatch(/<div class="plot"><ul><li>Depth: latest [^<]+, lowest [^<]+, highest [^<]+<\/li>/);
      expect(html).toMatch(/<noscript><meta http-equiv="refresh" content="3"><\/noscript>/);
    } finally {
      await page.close();
    }
  }, 60_000);
});
