/** Helpers for the scrape-source tests: a controllable clock, pages, and servers and sources closed after each test. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { ENGINE_QUEUE_KEYING } from '../../src/service/queue-keying.js';
import { createScrapeSource, type ScrapeSource, type ScrapeSourceOptions } from '../../src/sources/scrape-source.js';
import { CLIENT_GO_FIXTURES } from '../support/fixtures.js';
import { type LocalServer, startHttpServer } from '../support/local-server.js';

export const TEXT_CT = 'text/plain; version=0.0.4; charset=utf-8';
export const FIXTURES = CLIENT_GO_FIXTURES;

/** A clock the test moves by hand; starts at a round unix time in milliseconds. */
export class ManualClock {
  t = Date.UTC(2025, 0, 1, 12, 0, 0);
  readonly now = (): number => this.t;
  advance(ms: number): number {
    this.t += ms;
    return this.t;
  }
}

const servers: LocalServer[] = [];
const sources: ScrapeSource[] = [];

afterEach(async () => {
  await Promise.all(sources.splice(0).map((s) => s.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server on 127.0.0.1 closed after the test. */
export async function serve(handler: http.RequestListener): Promise<LocalServer> {
  const s = await startHttpServer(handler);
  servers.push(s);
  return s;
}

/** A server on a given port of 127.0.0.1 (for a restart on the same address), closed after the test. */
export async function serveOnPort(port: number, handler: http.RequestListener): Promise<LocalServer> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const s: LocalServer = {
    server,
    port: (server.address() as AddressInfo).port,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  servers.push(s);
  return s;
}

/** A server that answers every request with `page()` as text format 0.0.4, counting requests. */
export async function servePage(page: () => string): Promise<LocalServer & { requests: () => number }> {
  let requests = 0;
  const s = await serve((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': TEXT_CT });
    res.end(page());
  });
  return Object.assign(s, { requests: () => requests });
}

/** The options of a scrape source; queues are keyed as the engine keys them unless the test says otherwise. */
export type TestScrapeOptions = Omit<ScrapeSourceOptions, 'queueKeying'> &
  Partial<Pick<ScrapeSourceOptions, 'queueKeying'>>;

/** A scrape source closed after the test. */
export function scrapeSource(options: TestScrapeOptions): ScrapeSource {
  const s = createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, ...options });
  sources.push(s);
  return s;
}

/** A small controller-runtime style page: depth and adds of one queue. */
export function queuePage(options: { depth: number; adds: number; name?: string }): string {
  const name = options.name ?? 'pods';
  return [
    `# HELP ${WORKQUEUE.depth} Current depth of workqueue`,
    `# TYPE ${WORKQUEUE.depth} gauge`,
    `${WORKQUEUE.depth}{controller="${name}",name="${name}"} ${options.depth}`,
    `# HELP ${WORKQUEUE.adds} Total number of adds handled by workqueue`,
    `# TYPE ${WORKQUEUE.adds} counter`,
    `${WORKQUEUE.adds}{controller="${name}",name="${name}"} ${options.adds}`,
    '',
  ].join('\n');
}
