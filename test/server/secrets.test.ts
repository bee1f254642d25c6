/**
 * Planted secrets never leave the service. Scraping: a target URL's password (a target whose scrapes fail is
 * logged on every failure), the bearer token sent to targets (echoed back by a target's HTML page and its 500),
 * the API token. Prometheus mode: the URL's password, the basic-auth password, an `Authorization` header given
 * with `--header` (echoed back in API errors and in an HTML answer); `X-Scope-OrgID` is not a secret. Every
 * output is searched: every log line (debug level), the API (targets, diagnosis, one queue, rules, the OpenAPI
 * document), the page, `/metrics`, and the state file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { runCli } from '../support/cli.js';

const PASSWORD = 'planted-S3cret-passw0rd';
const BEARER_TOKEN = 'planted-bearer-T0ken-for-targets';
const API_TOKEN = 'planted-api-T0ken-for-clients';
const BASIC_PASSWORD = 'planted-basic-auth-Passw0rd';
const HEADER_TOKEN = 'planted-header-T0ken-for-prometheus';
const started: RunningServer[] = [];
const cleanups: Array<() => void | Promise<void>> = [];

afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A loopback HTTP server, closed after the test. */
async function serveHttp(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
  server.on('connection', (socket) => cleanups.push(() => void socket.destroy()));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wqd-secrets-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((done) => setTimeout(done, 50));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

/** Every API answer, the page, /metrics and the OpenAPI document, each prefixed with its path. */
async function everyAnswer(origin: string, token?: string): Promise<string[]> {
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  const get = async (path: string): Promise<string> =>
    `${path}: ${await (await fetch(`${origin}${path}`, { headers })).text()}`;
  const outputs = await Promise.all(
    ['/api/v1/targets', '/api/v1/diagnosis', '/api/v1/rules', '/', '/metrics', '/docs/json', '/healthz', '/readyz'].map(
      get,
    ),
  );
  const report = JSON.parse((outputs[1] ?? '').slice('/api/v1/diagnosis: '.length)) as {
    queues?: Array<{ id: string }>;
  };
  for (const queue of report.queues ?? []) outputs.push(await get(`/api/v1/queues/${encodeURIComponent(queue.id)}`));
  return outputs;
}

function expectNoSecret(outputs: readonly string[], secrets: readonly string[]): void {
  for (const output of outputs) {
    for (const secret of secrets) {
      if (output.includes(secret)) throw new Error(`a planted secret appears in: ${output.slice(0, 300)}`);
    }
  }
}

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
    const logger = capturingLogger(lines);
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

describe('every planted secret', () => {
  it('stays out of every output while scraping: logs, API, page, metrics, state file', async () => {
    const lines: string[] = [];
    const echo = (req: http.IncomingMessage): string => JSON.stringify(req.headers);
    const origin = await serveHttp((req, res) => {
      if (req.url === '/metrics') {
        if (req.headers.authorization !== `Bearer ${BEARER_TOKEN}`) {
          res.writeHead(401).end();
          return;
        }
        res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
        res.end('# TYPE workqueue_depth gauge\nworkqueue_depth{name="pods"} 3\n');
      } else if (req.url === '/login') {
        // A login page that shows the request it got, as debugging proxies do.
        res
          .writeHead(200, { 'Content-Type': 'text/html' })
          .end(`<html>${req.headers.authorization} ${echo(req)}</html>`);
      } else {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`failed for ${echo(req)}`);
      }
    });
    const dir = tempDir();
    writeFileSync(join(dir, 'bearer'), BEARER_TOKEN);
    writeFileSync(join(dir, 'api'), API_TOKEN);
    const stateDir = join(dir, 'state');
    const withPassword = `http://scraper:${PASSWORD}@127.0.0.1:${await closedPort()}/metrics`;
    const config = resolveServiceConfig({
      flags: {
        target: [withPassword, `${origin}/metrics`, `${origin}/login`, `${origin}/error`],
        listen: '127.0.0.1:0',
        scrapeInterval: '1s',
        evaluationInterval: '1s',
        bearerTokenFile: join(dir, 'bearer'),
        apiTokenFile: join(dir, 'api'),
        stateDir,
      },
      env: {},
    });
    const server = await startServer(config, { logger: capturingLogger(lines), processMetrics: false });
    started.push(server);
    await until(() => lines.filter((l) => l.includes('scrape failed')).length >= 6, 'failed scrapes of three targets');
    const outputs = [...(await everyAnswer(server.origin, API_TOKEN))];
    // The HTML answer is quoted, the credential in it is not.
    expect(outputs[0]).toContain('not a metrics page (HTML)');
    expect(outputs[0]).toContain('<secret>');
    await server.close();
    started.splice(0);
    outputs.push(lines.join(''), gunzipSync(readFileSync(join(stateDir, 'history.wqd.gz'))).toString('latin1'));
    expect(outputs.join('\n')).toContain('workqueue_depth');
    expectNoSecret(outputs, [PASSWORD, BEARER_TOKEN, API_TOKEN]);
  }, 60_000);

  it('stays out of every output in Prometheus mode, X-Scope-OrgID aside', async () => {
    const lines: string[] = [];
    let requests = 0;
    const origin = await serveHttp((req, res) => {
      requests++;
      // The credential first, so that even a short excerpt of the answer holds it.
      const headers = `${req.headers.authorization} ${req.headers['x-scope-orgid']} ${JSON.stringify(req.headers)}`;
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/api/v1/status/buildinfo') {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ status: 'success', data: { version: `echo ${headers}` } }));
      } else if (path === '/api/v1/series') {
        res.writeHead(502, { 'Content-Type': 'text/html' }).end(`<html>bad gateway for ${headers}</html>`);
      } else {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ status: 'error', errorType: 'bad_data', error: `cannot parse, request was ${headers}` }),
        );
      }
    });
    const dir = tempDir();
    writeFileSync(join(dir, 'basic'), BASIC_PASSWORD);
    const withPassword = origin.replace('http://', `http://reader:${PASSWORD}@`);
    const runs = [
      { prometheusUrl: withPassword, basicAuthUser: 'reader', basicAuthPasswordFile: join(dir, 'basic') },
      { prometheusUrl: origin, header: [`Authorization: Bearer ${HEADER_TOKEN}`, 'X-Scope-OrgID: tenant-a'] },
    ];
    for (const flags of runs) {
      lines.length = 0;
      const config = resolveServiceConfig({
        flags: { ...flags, listen: '127.0.0.1:0', evaluationInterval: '1s' },
        env: {},
      });
      const before = requests;
      const server = await startServer(config, { logger: capturingLogger(lines), processMetrics: false });
      started.push(server);
      await until(
        () => requests - before >= 3 && lines.some((l) => l.includes('evaluation failed')),
        'a failed evaluation',
      );
      const outputs = [...(await everyAnswer(server.origin)), lines.join('')];
      await server.close();
      started.splice(0);
      expect(outputs.join('\n')).toContain('<secret>');
      expectNoSecret(outputs, [
        PASSWORD,
        BASIC_PASSWORD,
        HEADER_TOKEN,
        Buffer.from(`reader:${BASIC_PASSWORD}`).toString('base64'),
      ]);
      if ('header' in flags) expect(outputs.join('\n')).toContain('tenant-a');
    }
  }, 60_000);
});

describe('a target that echoes its credentials into label values', () => {
  it('gets them stored as <secret>: in no log, API answer, page, metric or state file', async () => {
    const lines: string[] = [];
    // The credential the request carried, as a label value and as a queue name.
    const echoing = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const seen = String(req.headers.authorization ?? 'none').replace(/[\\"]/g, '');
      const credential = seen.slice(seen.indexOf(' ') + 1);
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(
        '# TYPE workqueue_depth gauge\n' +
          `workqueue_depth{name="pods",seen="${seen}"} 3\n` +
          `workqueue_depth{name="${credential}"} 4\n`,
      );
    };
    const origin = await serveHttp(echoing);
    const dir = tempDir();
    writeFileSync(join(dir, 'bearer'), BEARER_TOKEN);
    const stateDir = join(dir, 'state');
    const config = resolveServiceConfig({
      flags: {
        target: [`${origin}/metrics`],
        listen: '127.0.0.1:0',
        scrapeInterval: '1s',
        evaluationInterval: '1s',
        bearerTokenFile: join(dir, 'bearer'),
        stateDir,
      },
      env: {},
    });
    const server = await startServer(config, { logger: capturingLogger(lines), processMetrics: false });
    started.push(server);
    await until(() => lines.some((l) => l.includes('first evaluation finished')), 'the first evaluation');
    const outputs = [...(await everyAnswer(server.origin))];
    // Both queues are there, one of them named by the placeholder.
    const report = JSON.parse((outputs[1] ?? '').slice('/api/v1/diagnosis: '.length)) as { queues: unknown[] };
    expect(report.queues).toHaveLength(2);
    await server.close();
    started.splice(0);
    outputs.push(lines.join(''), gunzipSync(readFileSync(join(stateDir, 'history.wqd.gz'))).toString('latin1'));
    const all = outputs.join('\n');
    expect(all).toContain('Bearer <secret>');
    expectNoSecret(outputs, [BEARER_TOKEN]);
  }, 60_000);
});

describe('diagnose reports', () => {
  it('name a target without the credentials of its URL, in text, JSON and errors', async () => {
    const origin = await serveHttp((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end('# TYPE workqueue_depth gauge\nworkqueue_depth{name="pods"} 3\n');
    });
    const withPassword = origin.replace('http://', `http://scraper:${PASSWORD}@`);
    const outputs: string[] = [];
    for (const format of ['text', 'json']) {
      const run = await runCli(
        'diagnose',
        '--target',
        `${withPassword}/metrics`,
        '--window',
        '2s',
        '--scrape-interval',
        '1s',
        '--output',
        format,
      );
      expect(run.stdout).toContain('pods');
      outputs.push(run.stdout, run.stderr);
    }
    const failed = await runCli(
      'diagnose',
      '--target',
      `http://scraper:${PASSWORD}@127.0.0.1:${await closedPort()}/metrics`,
    );
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toContain('127.0.0.1');
    outputs.push(failed.stdout, failed.stderr);
    expectNoSecret(outputs, [PASSWORD]);
  }, 60_000);
});
