/**
 * Headless Chromium for the page's tests and the README's screenshot: Debian's `chromium` (the system
 * browser, which `npm test` installs when missing), driven by puppeteer-core. Never downloads a browser.
 * A missing browser is an error that says how to get one, never a skipped test.
 */
import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';

/** Where the browser is looked for: `WQD_CHROMIUM`, then Debian's paths. */
export function chromiumPath(): string {
  const candidates = [process.env.WQD_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (p): p is string => p !== undefined && p !== '',
  );
  const found = candidates.find((p) => existsSync(p));
  if (found === undefined) {
    throw new Error(
      `Chromium not found (looked at ${candidates.join(', ')}): install Debian's chromium ` +
        '(apt-get install chromium; `npm test` does it when run as root) or set WQD_CHROMIUM to a Chromium binary.',
    );
  }
  return found;
}

export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in a container has no user namespaces for the sandbox; /dev/shm may be small.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--headless=new', '--hide-scrollbars', '--mute-audio'],
  });
}
