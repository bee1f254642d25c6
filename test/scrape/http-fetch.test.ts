import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import {
  type FetchedPage,
  fetchMetricsPage,
  formatFromContentType,
  SCRAPE_ACCEPT_HEADER,
  ScrapeError,
} from '../../src/scrape/http-fetch.js';
import { createHttpAgents, type HttpAgents } from '../../src/scrape/http-transport.js';
import { newTargetHealth, recordScrapeFailure, recordScrapeSuccess } from '../../src/scrape/target-health.js';
import { packageVersion } from '../../src/util/version.js';
import { drainOrClose, gzipBomb } from '../support/gzip-bomb.js';
import { freePort, type LocalServer, startHttpServer, startHttpsServer } from '../support/local-server.js';
import { makeSelfSignedCert, type SelfSignedCert } from '../support/tls.js';

const TEXT_PAGE = `# HELP ${WORKQUEUE.depth} Current depth of workqueue\n# TYPE ${WORKQUEUE.depth} gauge\n${WORKQUEUE.depth}{name="pods"} 3\n`;
const OPENMETRICS_PAGE = `# TYPE ${WORKQUEUE.depth} gauge\n# HELP ${WORKQUEUE.depth} Current depth of workqueue\n${WORKQUEUE.depth}{name="pods"} 3\n# EOF\n`;
const TEXT_CT = 'text/plain; version=0.0.4; charset=utf-8';
const OM_CT = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

const servers: LocalServer[] = [];
let agents: HttpAgents;

async function serve(handler: http.RequestListener): Promise<LocalServer> {
  const s = await startHttpServer(handler);
  servers.push(s);
  return s;
}

async function scrapeError(p: Promise<unknown>): Promise<ScrapeError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ScrapeError);
    return err as ScrapeError;
  }
  throw new Error('expected the scrape to fail');
}

const base = { timeoutMs: 5_000, maxBytes: 1 << 20 };

beforeAll(() => {
  agents = createHttpAgents();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(() => {
  agents.http.destroy();
  agents.https.destroy();
});

describe('fetchMetricsPage over http', () => {
  it('returns the body, sizes and status of a plain page, and sends the scrape headers', async () => {
    let seen: http.IncomingHttpHeaders | undefined;
    const s = await serve((req, res) => {
      seen = req.headers;
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.end(TEXT_PAGE);
    });
    const page = await fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents });
    expect(page.body).toBe(TEXT_PAGE);
    expect(page.status).toBe(200);
    expect(page.contentType).toBe(TEXT_CT);
    expect(page.format).toBe('prometheus-text');
    expect(page.bytes).toBe(Buffer.byteLength(TEXT_PAGE));
    expect(page.compressedBytes).toBe(page.bytes);
    expect(page.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen?.accept).toBe(SCRAPE_ACCEPT_HEADER);
    expect(seen?.['accept-encoding']).toBe('gzip');
    expect(seen?.['user-agent']).toBe(`workqueue-doctor/${packageVersion()}`);
    expect(seen?.authorization).toBeUndefined();
  });

  it('drops a leading byte order mark and reads invalid UTF-8 as U+FFFD', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.end(
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT_PAGE), Buffer.from([0x23, 0xff, 0x0a])]),
      );
    });
    const page = await fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents });
    expect(page.body).toBe(`${TEXT_PAGE}#\uFFFD\n`);
  });

  it('gets OpenMetrics when the server honours the Accept header, and the text format otherwise', async () => {
    const s = await serve((req, res) => {
      if (String(req.headers.accept).includes('application/openmetrics-text')) {
        res.writeHead(200, { 'content-type': OM_CT });
        res.end(OPENMETRICS_PAGE);
      } else {
        res.writeHead(200, { 'content-type': TEXT_CT });
        res.end(TEXT_PAGE);
      }
    });
    const om = await fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents });
    expect(om.format).toBe('openmetrics');
    expect(om.body).toBe(OPENMETRICS_PAGE);
    const text = await fetchMetricsPage(
      { url: `${s.origin}/metrics` },
      { ...base, agents, headers: { Accept: 'text/plain;version=0.0.4' } },
    );
    expect(text.format).toBe('prometheus-text');
    expect(text.body).toBe(TEXT_PAGE);
    expect(formatFromContentType('Application/OpenMetrics-Text;version=1.0.0')).toBe('openmetrics');
    expect(formatFromContentType('')).toBe('prometheus-text');
  });

  it('decompresses a gzip page and reports both sizes', async () => {
    const big = TEXT_PAGE.repeat(500);
    const gz = zlib.gzipSync(big);
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': TEXT_CT, 'content-encoding': 'gzip' });
      res.end(gz);
    });
    const page = await fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents });
    expect(page.body).toBe(big);
    expect(page.bytes).toBe(Buffer.byteLength(big));
    expect(page.compressedBytes).toBe(gz.length);
    expect(page.compressedBytes).toBeLessThan(page.bytes);
  });

  it('fails with decompress on a corrupt gzip body', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': TEXT_CT, 'content-encoding': 'gzip' });
      res.end(Buffer.from('this is not gzip at all'));
    });
    const err = await scrapeError(fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents }));
    expect(err.code).toBe('decompress');
    expect(err.message).toContain(`GET ${s.origin}/metrics: `);
  });

  it('fails with timeout when the server never answers, and when the body stalls', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/stall-body') {
        res.writeHead(200, { 'content-type': TEXT_CT });
        res.write('# partial page\n');
      }
      // otherwise: never answer
    });
    const noAnswer = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, timeoutMs: 150 }),
    );
    expect(noAnswer.code).toBe('timeout');
    expect(noAnswer.message).toBe(`GET ${s.origin}/metrics: timed out after 150 ms`);
    const stalled = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/stall-body` }, { ...base, agents, timeoutMs: 150 }),
    );
    expect(stalled.code).toBe('timeout');
    expect(stalled.message).toBe(`GET ${s.origin}/stall-body: timed out after 150 ms`);
  });

  it('fails with too_large on a huge page, and before reading when Content-Length says so', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let chunksWritten = 0;
    let serverSawClose = false;
    const s = await serve(async (req, res) => {
      if (req.url === '/declared') {
        res.writeHead(200, { 'content-type': TEXT_CT, 'content-length': String(10 << 20) });
        res.write(chunk);
        return; // never finishes: the client must not wait for the rest
      }
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.on('close', () => {
        serverSawClose = true;
      });
      // an endless body, written with backpressure
      while (!res.destroyed) {
        chunksWritten++;
        if (!res.write(chunk)) await drainOrClose(res);
      }
    });
    const limit = 256 * 1024;
    const err = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, maxBytes: limit }),
    );
    expect(err.code).toBe('too_large');
    expect(err.message).toBe(`GET ${s.origin}/metrics: body exceeds the limit of ${limit} bytes (uncompressed)`);
    expect(err.bytes).toBeGreaterThan(limit);
    expect(err.bytes).toBeLessThanOrEqual(limit + chunk.length);
    const declared = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/declared` }, { ...base, agents, maxBytes: limit }),
    );
    expect(declared.code).toBe('too_large');
    expect(declared.message).toContain('Content-Length 10485760 exceeds the limit of 262144 bytes');
    // the endless writer is cut off: its connection closed
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (serverSawClose) resolve();
        else setTimeout(check, 10);
      };
      check();
    });
    expect(chunksWritten).toBeGreaterThan(0);
  });

  it('fails fast with too_large on a gzip bomb, reading only a sliver of it', async () => {
    const bomb = gzipBomb(256 * 1024, TEXT_CT); // 256 GiB uncompressed, about 272 MB compressed
    const s = await serve(bomb.handler);
    const limit = 8 << 20;
    const err = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, maxBytes: limit }),
    );
    expect(err.code).toBe('too_large');
    expect(err.message).toContain('(uncompressed)');
    // allocation stays near the limit: at most one decompressed chunk beyond it
    expect(err.bytes).toBeGreaterThan(limit);
    expect(err.bytes).toBeLessThanOrEqual(limit + (1 << 20));
    // the client hung up long before the server could send the bomb
    await bomb.closed();
    expect(bomb.sent()).toBeLessThan(bomb.compressedBytes / 4);
  });

  it('fails with http_status on a 500, with the status and the start of the body', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('collector exploded');
    });
    const err = await scrapeError(fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents }));
    expect(err.code).toBe('http_status');
    expect(err.status).toBe(500);
    expect(err.message).toBe(`GET ${s.origin}/metrics: HTTP 500 Internal Server Error`);
    expect(err.bodySnippet).toBe('collector exploded');
  });

  it('fails with connection when nothing listens', async () => {
    const port = await freePort();
    const err = await scrapeError(fetchMetricsPage({ url: `http://127.0.0.1:${port}/metrics` }, { ...base, agents }));
    expect(err.code).toBe('connection');
    expect(err.message).toMatch(new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/metrics: connection refused`));
  });

  it('rejects URLs that are not http(s), and honours an AbortSignal', async () => {
    const bad = await scrapeError(fetchMetricsPage({ url: 'ftp://127.0.0.1/metrics' }, { ...base, agents }));
    expect(bad.code).toBe('invalid_url');
    const s = await serve(() => {
      // never answer
    });
    const ac = new AbortController();
    const pending = fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, signal: ac.signal });
    ac.abort();
    const aborted = await scrapeError(pending);
    expect(aborted.code).toBe('aborted');
  });

  it('retries once on a fresh connection when a reused keep-alive socket was closed by the server', async () => {
    // A raw server: each connection answers its first request and keeps the socket open, then drops
    // the connection when a second request arrives on it, as a server closing an idle connection does.
    const sockets = new Set<net.Socket>();
    let connections = 0;
    const raw = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      connections++;
      let requests = 0;
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        while (buffered.includes('\r\n\r\n')) {
          buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
          requests++;
          if (requests > 1) {
            socket.destroy();
            return;
          }
          socket.write(
            `HTTP/1.1 200 OK\r\nContent-Type: ${TEXT_CT}\r\nContent-Length: ${Buffer.byteLength(TEXT_PAGE)}\r\nConnection: keep-alive\r\n\r\n${TEXT_PAGE}`,
          );
        }
      });
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(raw.address() as net.AddressInfo).port}/metrics`;
      const own = createHttpAgents();
      try {
        expect((await fetchMetricsPage({ url }, { ...base, agents: own })).body).toBe(TEXT_PAGE);
        expect((await fetchMetricsPage({ url }, { ...base, agents: own })).body).toBe(TEXT_PAGE);
        expect(connections).toBe(2);
      } finally {
        own.http.destroy();
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => raw.close(() => resolve()));
    }
  });

  it('follows a flapping target: ok, 500, ok, 500, and the health record tracks it', async () => {
    let n = 0;
    const s = await serve((_req, res) => {
      n++;
      if (n % 2 === 0) {
        res.writeHead(500);
        res.end('flap');
        return;
      }
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.end(TEXT_PAGE);
    });
    const url = `${s.origin}/metrics`;
    let health = newTargetHealth('t1', url);
    const outcomes: string[] = [];
    for (let i = 0; i < 4; i++) {
      const at = 1_000 + i;
      try {
        const page: FetchedPage = await fetchMetricsPage({ url }, { ...base, agents });
        health = recordScrapeSuccess(health, { at, durationMs: page.durationMs, bytes: page.bytes });
        outcomes.push('ok');
        expect(health.up).toBe(true);
        expect(health.lastError).toBeNull();
        expect(health.bytes).toBe(Buffer.byteLength(TEXT_PAGE));
      } catch (err) {
        health = recordScrapeFailure(health, { at, durationMs: 1, error: err });
        outcomes.push((err as ScrapeError).code);
        expect(health.up).toBe(false);
        expect(health.lastError).toEqual({
          code: 'http_status',
          message: `GET ${url}: HTTP 500 Internal Server Error`,
          at,
        });
      }
      expect(health.lastScrapeAt).toBe(at);
    }
    expect(outcomes).toEqual(['ok', 'http_status', 'ok', 'http_status']);
    expect(health.consecutiveFailures).toBe(1);
    expect(health.bytes).toBe(Buffer.byteLength(TEXT_PAGE));
  });
});

describe('bearer token file', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'wqd-token-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends the token from the file and re-reads it after the file changes', async () => {
    const seen: Array<string | undefined> = [];
    const s = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.end(TEXT_PAGE);
    });
    const file = join(dir, 'token');
    writeFileSync(file, 'first-token\n');
    const options = { ...base, agents, bearerTokenFile: file };
    await fetchMetricsPage({ url: `${s.origin}/metrics` }, options);
    await fetchMetricsPage({ url: `${s.origin}/metrics` }, options);
    writeFileSync(file, 'second-token-rotated');
    // a later mtime as well, in case the file system's clock is coarse
    const later = new Date(Date.now() + 5_000);
    utimesSync(file, later, later);
    await fetchMetricsPage({ url: `${s.origin}/metrics` }, options);
    expect(seen).toEqual(['Bearer first-token', 'Bearer first-token', 'Bearer second-token-rotated']);
  });

  it('fails with auth_file when the token file is missing or empty', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200);
      res.end(TEXT_PAGE);
    });
    const missing = join(dir, 'absent');
    const err = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, bearerTokenFile: missing }),
    );
    expect(err.code).toBe('auth_file');
    expect(err.message).toContain(`cannot read bearer token file ${missing}`);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '  \n');
    const err2 = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, bearerTokenFile: empty }),
    );
    expect(err2.code).toBe('auth_file');
    expect(err2.message).toContain('is empty');
  });
});

describe('https', () => {
  let cert: SelfSignedCert;
  let seenAuth: string | undefined;
  let s: LocalServer;
  beforeAll(async () => {
    cert = makeSelfSignedCert();
    s = await startHttpsServer(cert, (req, res) => {
      seenAuth = req.headers.authorization;
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.end(TEXT_PAGE);
    });
  });
  afterAll(async () => {
    await s.close();
    cert.remove();
  });

  it('verifies a self-signed server with caFile', async () => {
    const page = await fetchMetricsPage(
      { url: `${s.origin}/metrics` },
      { ...base, agents, caFile: cert.certFile, bearerToken: 'static-token' },
    );
    expect(page.body).toBe(TEXT_PAGE);
    expect(seenAuth).toBe('Bearer static-token');
  });

  it('accepts it with insecureSkipVerify', async () => {
    const page = await fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, insecureSkipVerify: true });
    expect(page.body).toBe(TEXT_PAGE);
  });

  it('fails with tls without either, and with ca_file when the CA file is missing', async () => {
    const err = await scrapeError(fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents }));
    expect(err.code).toBe('tls');
    expect(err.message).toContain(`GET ${s.origin}/metrics: TLS: `);
    const missing = await scrapeError(
      fetchMetricsPage({ url: `${s.origin}/metrics` }, { ...base, agents, caFile: join(cert.dir, 'nope.pem') }),
    );
    expect(missing.code).toBe('ca_file');
  });
});
