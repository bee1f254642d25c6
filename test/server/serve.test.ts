/**
 * `serve` end to end on 127.0.0.1: the demo (simulated controllers warmed up on virtual time, then live)
 * shows the expected diagnoses in `/api/v1/diagnosis` and `/metrics` right after start, its warm-up and
 * live scrapes form one history; static targets are scraped live; the built CLI stops on SIGTERM (and on SIGHUP,
 * logged as such) with exit 0.
 */
import net from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import { WORKQUEUE } from '../../src/metrics/names.js';
import type { TargetsView } from '../../src/service/target-status.js';
import { type LiveSimulation, startLiveSimulation } from '../../src/simulate/index.js';
import type { ScrapeSource } from '../../src/sources/scrape-source.js';
import { spawnCli } from '../support/cli-process.js';
import { expectValid, validateReport } from './helpers.js';

const silent = pino({ level: 'silent' });
const started: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = [];

afterEach(async () => {
  for (const s of started.splice(0).reverse()) await ('close' in s ? s.close() : s.stop());
});

async function poll<T>(read: () => Promise<T | undefined>, what: string, attempts = 400): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function firstReport(origin: string): Promise<Report> {
  return poll(async () => {
    const response = await fetch(`${origin}/api/v1/diagnosis`);
    return response.status === 200 ? ((await response.json()) as Report) : undefined;
  }, 'the first report');
}

describe('serve --demo', () => {
  it('diagnoses the built-in controllers at once, in the report and in /metrics', async () => {
    const lines: string[] = [];
    const config = resolveServiceConfig({ flags: { demo: true, listen: '127.0.0.1:0' }, env: {} });
    const server: RunningServer = await startServer(config, { logger: silent, announce: (l) => lines.push(l) });
    started.push(server);

    expect(lines).toEqual([
      `workqueue-doctor demo: open ${server.origin}/ (JSON at /api/v1/diagnosis, API docs at /docs)`,
    ]);
    expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const report = await firstReport(server.origin);
    expectValid(validateReport, report);
    expect(report.errors).toEqual([]);

    const expected = server.runtime.demo?.expected ?? [];
    expect(expected.map((q) => q.name).sort()).toEqual([
      'dbuser',
      'deployment',
      'ingress-status',
      'pod',
      'volumesnapshot',
    ]);
    for (const queue of expected) {
      const found = report.queues.find((q) => q.queue.name === queue.name);
      expect(found, String(queue.name)).toBeDefined();
      const rules = found?.findings.map((f) => f.rule) ?? [];
      for (const rule of queue.expected) expect(rules, `${queue.name}: ${rules.join(', ')}`).toContain(rule);
      if (queue.expected.length === 0) expect(found?.status).toBe('ok');
    }

    const metrics = await (await fetch(`${server.origin}/metrics`)).text();
    const target = report.queues[0]?.queue.target ?? '';
    expect(target).toMatch(/^workqueue-doctor-demo\/127\.0\.0\.1:\d+$/);
    expect(metrics).toContain(
      `workqueue_doctor_finding{rule="WorkqueueHotLoop",severity="warning",target="${target}",name="ingress-status",controller="ingress-status"} 1`,
    );
    expect(metrics).toContain(
      `workqueue_doctor_finding{rule="WorkqueueBacklog",severity="warning",target="${target}",name="pod",controller="pod"} 1`,
    );
    expect(metrics).not.toMatch(/workqueue_doctor_finding\{[^}]*name="deployment"/);
    expect(metrics).toContain(`workqueue_doctor_target_up{target="${target}"} 1`);
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(metrics).toMatch(/^process_cpu_seconds_total \d/m);
    expect(metrics).not.toMatch(/^workqueue_doctor_process_/m);
    expect(metrics).toMatch(
      new RegExp(
        `^workqueue_doctor_scrape_duration_seconds_count\\{target="${target.replaceAll('/', '\\/')}"\\} [1-9]`,
        'm',
      ),
    );

    const targets = (await (await fetch(`${server.origin}/api/v1/targets`)).json()) as TargetsView;
    expect(targets.mode).toBe('scrape');
    if (targets.mode === 'scrape') expect(targets.targets).toMatchObject([{ target, up: true, lastError: null }]);
    expect((await fetch(`${server.origin}/readyz`)).status).toBe(200);

    // Warm-up and live scrapes are one history: one series per name, counters continuing past the warm-up.
    const source = server.runtime.source as ScrapeSource;
    const liveScrapeAt = Date.now();
    await source.scrapeOnce();
    const adds = source.history.select({ metric: WORKQUEUE.adds });
    expect(adds.map((s) => s.labels.name).sort()).toEqual([
      'dbuser',
      'deployment',
      'ingress-status',
      'pod',
      'volumesnapshot',
    ]);
    for (const series of adds) {
      const t = [...series.t];
      const v = [...series.v];
      // 30 minutes at 15 s (the history's bound), the oldest from the warm-up, the newest from the live scrape.
      expect(t.length).toBe(121);
      expect(t.at(0)).toBeLessThan(liveScrapeAt - 29 * 60_000);
      expect(t.at(-1)).toBeGreaterThanOrEqual(liveScrapeAt);
      for (let i = 1; i < v.length; i++) expect(v[i]).toBeGreaterThanOrEqual(v[i - 1] as number);
    }

    const simUrl = server.runtime.demo?.url ?? '';
    await server.close();
    started.length = 0;
    await expect(fetch(`${server.origin}/healthz`)).rejects.toThrow();
    await expect(fetch(simUrl)).rejects.toThrow();
  });
});

describe('serve --demo listen address', () => {
  it('falls back to a free port when the default 127.0.0.1:9808 is taken', async () => {
    const blocker = net.createServer();
    // Taken by this test, or already by someone else: either way the default port is busy.
    await new Promise<void>((resolve) => {
      blocker.once('error', () => resolve());
      blocker.listen(9808, '127.0.0.1', () => resolve());
    });
    try {
      const config = resolveServiceConfig({ flags: { demo: true }, env: {} });
      expect(config.listen).toEqual({ host: '127.0.0.1', port: 9808 });
      const lines: string[] = [];
      const server = await startServer(config, {
        logger: silent,
        processMetrics: false,
        demoWarmUpMs: 60_000,
        announce: (l) => lines.push(l),
      });
      started.push(server);
      expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.origin).not.toBe('http://127.0.0.1:9808');
      expect(lines[0]).toContain(server.origin);
      expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => (blocker.listening ? blocker.close(() => resolve()) : resolve()));
    }
  });

  it('fails with the key named when an explicitly given address is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const config = resolveServiceConfig({ flags: { demo: true, listen: `127.0.0.1:${port}` }, env: {} });
      await expect(
        startServer(config, { logger: silent, processMetrics: false, demoWarmUpMs: 60_000 }),
      ).rejects.toThrow(`--listen: 127.0.0.1:${port} is already in use`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});

describe('serve --target', () => {
  it('scrapes live targets and reports their queues and health', async () => {
    const live: LiveSimulation = await startLiveSimulation({
      scenario: 'hot-loop-status-write',
      listen: '127.0.0.1:0',
    });
    started.push(live);
    const config = resolveServiceConfig({
      flags: {
        target: [live.url, 'http://127.0.0.1:1/metrics'],
        listen: '127.0.0.1:0',
        scrapeInterval: '1s',
        evaluationInterval: '1s',
      },
      env: {},
    });
    const server = await startServer(config, { logger: silent, processMetrics: false });
    started.push(server);

    const report = await poll(async () => {
      const r = await firstReport(server.origin);
      return r.queues.some((q) => q.queue.name === 'ingress-status') ? r : undefined;
    }, 'the live queue');
    expectValid(validateReport, report);
    expect(report.errors).toMatchObject([{ target: 'static/127.0.0.1:1', code: 'connection' }]);

    const targets = (await (await fetch(`${server.origin}/api/v1/targets`)).json()) as TargetsView;
    if (targets.mode !== 'scrape') throw new Error('expected scrape mode');
    const byTarget = new Map(targets.targets.map((t) => [t.target, t]));
    expect(byTarget.get(`static/${new URL(live.url).host}`)).toMatchObject({ up: true, lastError: null });
    expect(byTarget.get('static/127.0.0.1:1')).toMatchObject({ up: false, lastError: { code: 'connection' } });

    const metrics = await (await fetch(`${server.origin}/metrics`)).text();
    expect(metrics).toContain('workqueue_doctor_target_up{target="static/127.0.0.1:1"} 0');
    expect(metrics).toMatch(
      /^workqueue_doctor_scrape_errors_total\{target="static\/127\.0\.0\.1:1",code="connection"\} [1-9]/m,
    );
  });
});

describe('the built CLI', () => {
  it('stops at once, exit code 0, on SIGTERM during the first scrape round of a target that never answers', async () => {
    const held: net.Socket[] = [];
    let asked: () => void = () => undefined;
    const scraped = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const silentTarget = net.createServer((socket) => {
      held.push(socket);
      socket.once('data', () => asked());
    });
    await new Promise<void>((done) => silentTarget.listen(0, '127.0.0.1', done));
    const { port } = silentTarget.address() as net.AddressInfo;
    const serve = spawnCli([
      'serve',
      '--target',
      `http://127.0.0.1:${port}/metrics`,
      // The first round would wait on the target for 50 minutes.
      '--scrape-interval',
      '1h',
      '--scrape-timeout',
      '50m',
      '--retention',
      '1d',
      '--listen',
      '127.0.0.1:0',
    ]);
    try {
      await Promise.race([
        scraped,
        serve.exited.then((code) => {
          throw new Error(`exited with ${code} before scraping: ${serve.stderr()}`);
        }),
      ]);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(serve.stdout()).toContain('shutting down before the start finished');
    } finally {
      await serve.stop();
      for (const socket of held) socket.destroy();
      await new Promise<void>((done) => silentTarget.close(() => done()));
    }
  }, 60_000);

  it.each(['SIGTERM', 'SIGHUP'] as const)('serve --demo stops on %s with exit code 0', async (signal) => {
    const serve = spawnCli(['serve', '--demo', '--listen', '127.0.0.1:0']);
    try {
      const [, origin] = await serve.output('stderr', /demo: open (http:\/\/127\.0\.0\.1:\d+)\/ /);
      await poll(async () => ((await fetch(`${origin}/readyz`)).status === 200 ? true : undefined), 'readiness');
      const page = await fetch(`${origin}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<figure class="chart"');
      serve.child.kill(signal);
      expect(await serve.exited).toBe(0);
      await expect(fetch(`${origin}/healthz`)).rejects.toThrow();
      const log = serve
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { msg: string; level: number; signal?: string });
      expect(log.map((l) => l.msg)).toEqual(
        expect.arrayContaining(['first evaluation finished; ready', 'shutting down', 'stopped']),
      );
      expect(log.find((l) => l.msg === 'shutting down')?.signal).toBe(signal);
    } finally {
      await serve.stop();
    }
  });
});
