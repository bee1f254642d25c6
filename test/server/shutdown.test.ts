/**
 * The built CLI's `serve` stops on SIGTERM with exit code 0 whatever is running: an evaluation waiting on
 * Prometheus, a scrape waiting on a target, and 50 clients keeping the API busy. Each wait would outlast the
 * shutdown deadline (10 s, after which the process exits with code 1), so exit code 0 says the stop did not wait
 * for it. Loopback only; the tests stop what they start.
 */
import http from 'node:http';
import type net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { type CliProcess, spawnCli } from '../support/cli-process.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A loopback server, closed (with its sockets) after the test. */
async function listen(handler: http.RequestListener): Promise<{ origin: string; server: http.Server }> {
  const server = http.createServer(handler);
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as net.AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, server };
}

/** `serve` with `args`; resolves with the process and its API origin once it listens. */
async function startServe(args: readonly string[]): Promise<{ serve: CliProcess; origin: string }> {
  const serve = spawnCli(['serve', '--listen', '127.0.0.1:0', ...args]);
  cleanups.push(() => serve.stop());
  const [, origin] = await serve.output('stdout', /"page":"(http:\/\/127\.0\.0\.1:\d+)\/"/);
  return { serve, origin: origin as string };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const ready = (origin: string) => async () => (await fetch(`${origin}/readyz`).catch(() => undefined))?.status === 200;

function onePage(depth: number): string {
  return [
    `# TYPE ${WORKQUEUE.depth} gauge`,
    `${WORKQUEUE.depth}{name="pods"} ${depth}`,
    `# TYPE ${WORKQUEUE.adds} counter`,
    `${WORKQUEUE.adds}{name="pods"} ${depth * 10}`,
    '',
  ].join('\n');
}

describe('serve stops on SIGTERM within the deadline', () => {
  it('during an evaluation waiting on Prometheus', async () => {
    let hang = false;
    let held = 0;
    const prometheus = await listen((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (hang && path !== '/api/v1/status/buildinfo') {
        held++;
        return; // never answered: the evaluation waits on it
      }
      res.setHeader('Content-Type', 'application/json');
      if (path === '/api/v1/status/buildinfo') {
        res.end(
          JSON.stringify({
            status: 'success',
            data: { version: '3.0.0', revision: 'r', branch: 'b', buildUser: 'u', buildDate: 'd', goVersion: 'go' },
          }),
        );
      } else if (path === '/api/v1/query_range') {
        res.end(JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }));
      } else if (path === '/api/v1/query') {
        res.end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [] } }));
      } else if (path === '/api/v1/series') {
        // One work queue (an empty Prometheus is an evaluation error, never ready).
        const queue = { __name__: 'workqueue_depth', job: 'ctrl', instance: 'a:8080', name: 'q', controller: 'q' };
        res.end(JSON.stringify({ status: 'success', data: [queue] }));
      } else {
        res.end(JSON.stringify({ status: 'success', data: [] }));
      }
    });
    const { serve, origin } = await startServe([
      '--prometheus-url',
      prometheus.origin,
      // Far past the test's own timeout: the stop must abandon every request in flight, not wait for it to time out.
      '--prometheus-timeout',
      '10m',
      '--evaluation-interval',
      '1s',
    ]);
    await until(ready(origin), 'readiness');
    hang = true;
    await until(() => held > 0, 'an evaluation waiting on Prometheus');
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.stdout()).toContain('"msg":"stopped"');
  }, 90_000);

  it('during a scrape waiting on a target', async () => {
    let scrapes = 0;
    const target = await listen((_req, res) => {
      scrapes++;
      if (scrapes === 1) res.end(onePage(3));
      // later scrapes are never answered
    });
    const { serve, origin } = await startServe([
      '--target',
      `${target.origin}/metrics`,
      '--scrape-interval',
      '11s',
      '--scrape-timeout',
      '10900ms',
      '--evaluation-interval',
      '1s',
    ]);
    await until(ready(origin), 'readiness');
    await until(() => scrapes >= 2, 'the second scrape');
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.stdout()).toContain('"msg":"stopped"');
  }, 90_000);

  it('with 50 clients keeping the API busy', async () => {
    const target = await listen((_req, res) => res.end(onePage(3)));
    const { serve, origin } = await startServe([
      '--target',
      `${target.origin}/metrics`,
      '--scrape-interval',
      '1s',
      '--evaluation-interval',
      '1s',
    ]);
    await until(ready(origin), 'readiness');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    cleanups.push(() => agent.destroy());
    let answered = 0;
    let running = true;
    const paths = ['/api/v1/diagnosis', '/', '/healthz', '/metrics'];
    const client = async (i: number): Promise<void> => {
      for (let k = i; running; k++) {
        const ok = await new Promise<boolean>((resolve) => {
          http
            .get(`${origin}${paths[k % paths.length]}`, { agent }, (res) => {
              res.resume();
              res.once('end', () => resolve(true));
              res.once('error', () => resolve(false));
            })
            .once('error', () => resolve(false));
        });
        if (!ok) return; // the server went away
        answered++;
      }
    };
    const clients = Array.from({ length: 50 }, (_, i) => client(i));
    await until(() => answered >= 500, '500 answers under load');
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    running = false;
    await Promise.all(clients);
    expect(serve.stdout()).toContain('"msg":"stopped"');
  }, 90_000);
});
