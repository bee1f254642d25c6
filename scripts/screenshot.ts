/// <reference lib="dom" />
/**
 * Writes the README's screenshots of the page, into docs/ or the directory given: page.png (1,400 px wide),
 * page-phone.png (390 px, a phone: the list, one line per queue) and page-phone-queue.png (the phone with the hot
 * loop's queue opened by its link). Starts the demo (with a Grafana URL, for its links) on a free 127.0.0.1 port,
 * waits for its first report, opens the page in headless Chromium (Debian's `chromium`), waits for the charts in
 * view, and saves the top of the view. Run with `npm run screenshot`.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import type { Browser } from 'puppeteer-core';
import { startServer } from '../src/cli/serve.js';
import { resolveServiceConfig } from '../src/config/service-config.js';
import type { Report } from '../src/diagnosis/report.js';
import { launchChromium } from '../test/support/chromium.js';

const SHOTS = [
  { file: 'page.png', width: 1400, height: 1700, scale: 1, queue: undefined },
  { file: 'page-phone.png', width: 390, height: 1300, scale: 2, queue: undefined },
  { file: 'page-phone-queue.png', width: 390, height: 1500, scale: 2, queue: 'ingress-status' },
] as const;
const dir = resolve(process.argv[2] ?? 'docs');

const config = resolveServiceConfig({
  flags: { demo: true, listen: '127.0.0.1:0', grafanaUrl: 'https://grafana.example.com' },
  env: {},
});
const server = await startServer(config, { logger: pino({ level: 'warn' }), announce: () => {} });
let browser: Browser | undefined;
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${server.origin}/readyz`)).status === 200) break;
    if (i > 600) throw new Error('no report after 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await launchChromium();
  await mkdir(dir, { recursive: true });
  for (const shot of SHOTS) {
    const page = await browser.newPage();
    await page.setViewport({ width: shot.width, height: shot.height, deviceScaleFactor: shot.scale });
    const report = (await (await fetch(`${server.origin}/api/v1/diagnosis`)).json()) as Report;
    const linked = report.queues.find((q) => q.queue.name === shot.queue);
    await page.goto(`${server.origin}/${linked === undefined ? '' : `#q-${linked.id}`}`, { waitUntil: 'networkidle0' });
    // The script has run and the charts in view are drawn (those further down are drawn when scrolled to).
    await page.waitForFunction(() => {
      const inView = [...document.querySelectorAll('details.queue[open] figure.chart')].filter((f) => {
        const box = f.getBoundingClientRect();
        return box.bottom > 0 && box.top < window.innerHeight;
      });
      return (
        performance.getEntriesByName('wqd-filtered').length > 0 && inView.every((f) => f.classList.contains('drawn'))
      );
    });
    const out = join(dir, shot.file);
    await page.screenshot({ path: out as `${string}.png` });
    process.stderr.write(`screenshot: ${out}\n`);
    await page.close();
  }
} finally {
  await browser?.close();
  await server.close();
}
