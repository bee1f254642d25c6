/**
 * Credentials in a target URL never leave the service: a target whose scrapes fail, given as
 * `http://user:PASSWORD@host/metrics`, is named without them in the log (every failed scrape is logged), the
 * targets and diagnosis APIs, the page and the service's own /metrics.
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';

const PASSWORD = 'planted-S3cret-passw0rd';
const started: RunningServer[] = [];

afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
});

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('credentials in target URLs', () => {
  it('appear in no log line, API response, page or metric', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const url = `http://scraper:${PASSWORD}@127.0.0.1:${await closedPort()}/metrics`;
    const config = resolveServiceConfig({
      flags: { target: [url], listen: '127.0.0.1:0', scrapeInterval: '1s' },
      env: {},
    });
    const server = await startServer(config, { logger, processMetrics: false });
    started.push(server);
    for (let i = 0; i < 200 && !lines.some((l) => l.includes('scrape failed')); i++) {
      await new Promise((done) => setTimeout(done, 50));
    }
    expect(lines.some((l) => l.includes('scrape failed'))).toBe(true);
    const outputs = [lines.join('')];
    for (const path of ['/api/v1/targets', '/api/v1/diagnosis', '/', '/metrics']) {
      const response = await fetch(`${server.origin}${path}`);
      outputs.push(`${path}: ${await response.text()}`);
    }
    expect(outputs.join('\n')).toContain('127.0.0.1');
    for (const output of outputs) expect(output).not.toContain(PASSWORD);
  }, 30_000);
});
