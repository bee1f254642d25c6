/// <reference lib="dom" />
/**
 * Writes the README's screenshot of the page (docs/page.png, or the path given): starts the demo on a free
 * 127.0.0.1 port, waits for its first report, opens `/` in headless Chromium (Debian's `chromium`) at
 * 1280 px wide, waits for the charts, and saves the top of the page. Run with `npm run screenshot`.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pino } from 'pino';
import { startServer } from '../src/cli/serve.js';
import { resolveServiceConfig } from '../src/config/service-config.js';
import { launchChromium } from '../test/support/chromium.js';

const WIDTH = 1280;
const HEIGHT = 1700;
const out = resolve(process.argv[2] ?? 'docs/page.png');

const config = resolveServiceConfig({ flags: { demo: true, listen: '127.0.0.1:0' }, env: {} });
const server = await startServer(config, { logger: pino({ level: 'warn' }), announce: () => {} });
const browser = await launchChromium();
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${server.origin}/readyz`)).status === 200) break;
    if (i > 600) throw new Error('no report after 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const page = await browser.newPage();
  await page.setViewport({ width: WIDTH, height: HEIGHT, deviceScaleFactor: 1 });
  await page.goto(`${server.origin}/`, { waitUntil: 'networkidle0' });
  await page.waitForFunction(() => {
    const figures = [...document.querySelectorAll('figure.chart')];
    return figures.length > 0 && figures.every((f) => f.classList.contains('drawn'));
  });
  await mkdir(dirname(out), { recursive: true });
  await page.screenshot({ path: out as `${string}.png`, clip: { x: 0, y: 0, width: WIDTH, height: HEIGHT } });
  process.stderr.write(`screenshot: ${out}\n`);
} finally {
  await browser.close();
  await server.close();
}
