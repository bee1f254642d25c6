/**
 * The service under load and at rest.
 *
 * 1. Serving: `GET /api/v1/diagnosis` and the page `GET /` with 100 queues (10 targets × 10 queues of
 *    synthetic controllers, 30 minutes of history at 15 s, diagnosed by the real engine) against
 *    `GET /healthz` of the same server in the same run, with autocannon on loopback, routes alternating in
 *    bounded rounds, while the service scrapes its targets and evaluates at its default interval (15 s), as
 *    it runs. Reported as the ratio of requests per second (goal >= 0.6) with the p99 latency of each, for a
 *    client that accepts gzip (Go's HTTP client, Prometheus, browsers, curl --compressed) and for one that
 *    does not.
 * 2. Memory, each in a fresh process: the built CLI idle (`serve --target` of one exporter without
 *    work-queue metrics; goal <= 60 MiB), and the service with 50 queues × 30 minutes at 15 s in its
 *    scrape source's history (goal <= 90 MiB). RSS right after start (after a forced GC where the process
 *    can force one) and settled (median of the last 10 s of a 30 s idle window, once V8's memory reducer
 *    has run, as in a long-running process).
 *
 * The servers run from compiled JavaScript (tsx alone adds ~45 MB of RSS): this file is compiled with
 * `src/` into `.tmp/bench-service/` and re-run from there as the child. The child is `startServer`, the
 * programmatic `serve`, with its history preloaded before it starts; the synthetic exporters run in this
 * (the driver) process and keep their counters going, so the live scrapes continue the preloaded history.
 *
 * Run: `npx tsx bench/service.ts`. Prints a markdown table.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_EVALUATION_INTERVAL } from '../src/config/service-defaults.js';
import { closeServer } from '../test/support/local-server.js';
import { firstLine, median, rssOf, run } from './service-process.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

const ROUND_SECONDS = 3;
const ROUNDS = 5;
const CONNECTIONS = 10;
const SETTLE_SECONDS = 30;
const GOALS = { ratio: 0.6, idleMiB: 60, historyMiB: 90 } as const;
const MiB = 1024 * 1024;
/** Extra node flags for the measured processes, e.g. BENCH_NODE_FLAGS=--max-semi-space-size=4. */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
const INTERVAL_MS = 15_000;
const HISTORY_MS = 30 * 60_000;

type ChildResult = {
  port: number;
  rssBytes: number;
  heapUsedBytes: number;
  queues: number;
  findings: number;
  series: number;
  samples: number;
  reportBytes: number;
  evaluationMs: number;
};

// ---------------------------------------------------------------------------------------------------
// Child: `startServer` with its history preloaded.

async function child(args: readonly string[]): Promise<void> {
  const [startText, perTargetText, evaluationInterval, ...urls] = args;
  const startMs = Number(startText);
  const perTarget = Number(perTargetText);
  const { pino } = await import('pino');
  const { startServer } = await import('../src/cli/serve.js');
  const { resolveServiceConfig } = await import('../src/config/service-config.js');
  const { parseExposition, keepFamilies } = await import('../src/exposition/parser.js');
  const { DIAGNOSTIC_FAMILIES } = await import('../src/metrics/names.js');
  const { staticTargets } = await import('../src/discovery/static.js');
  const { scrapeLabels } = await import('../src/sources/target-provider.js');

  const config = resolveServiceConfig({
    flags: { target: urls, listen: '127.0.0.1:0', evaluationInterval },
    env: {},
  });
  const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
  const server = await startServer(config, {
    logger: pino({ level: 'silent' }),
    beforeStart: (runtime) => {
      const history = (runtime.source as import('../src/sources/scrape-source.js').ScrapeSource).history;
      // The service names static targets as `staticTargets` does: the same ids and labels here.
      for (const [i, target] of staticTargets(urls).entries()) {
        const queues = profiles(urls.indexOf(target.url) >= 0 ? urls.indexOf(target.url) : i, perTarget);
        for (let t = 0; t <= HISTORY_MS; t += INTERVAL_MS) {
          const page = parseExposition(syntheticPage(queues, t / 1000), { keep });
          history.append({ id: target.key, labels: scrapeLabels(target) }, page, startMs + t);
        }
      }
    },
  });
  while (!server.runtime.service.ready()) await new Promise((done) => setTimeout(done, 20));
  const outcome = await server.runtime.service.evaluate();
  const report = server.runtime.service.report();
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((done) => setTimeout(done, 100));
  }
  const memory = process.memoryUsage();
  const stats = (server.runtime.source as import('../src/sources/scrape-source.js').ScrapeSource).history.stats();
  const result: ChildResult = {
    port: Number(new URL(server.origin).port),
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    queues: report?.queues.length ?? 0,
    findings: report?.queues.reduce((n, q) => n + q.findings.length, 0) ?? 0,
    series: stats.series,
    samples: stats.samples,
    reportBytes: Buffer.byteLength(JSON.stringify(report ?? {})),
    evaluationMs: outcome.durationMs,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (process.env.BENCH_SERVICE_VERBOSE === '1') {
    const v8 = await import('node:v8');
    setInterval(() => {
      const m = process.memoryUsage();
      const spaces = v8
        .getHeapSpaceStatistics()
        .map((x) => `${x.space_name}=${mib(x.physical_space_size)}`)
        .join(' ');
      process.stderr.write(
        `rss=${mib(m.rss)} heapTotal=${mib(m.heapTotal)} heapUsed=${mib(m.heapUsed)} external=${mib(m.external)} arrayBuffers=${mib(m.arrayBuffers)} ${spaces}\n`,
      );
    }, 5000).unref();
  }
  process.once('SIGTERM', () => void server.close());
}

// ---------------------------------------------------------------------------------------------------
// Driver.

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const buildDir = join(root, '.tmp', 'bench-service');

function compile(): { child: string; cli: string } {
  mkdirSync(buildDir, { recursive: true });
  const config = join(buildDir, 'tsconfig.json');
  writeFileSync(
    config,
    JSON.stringify({
      extends: '../../tsconfig.json',
      compilerOptions: { rootDir: '../..', outDir: 'build', declaration: false, sourceMap: false, noEmit: false },
      include: [
        '../../src',
        '../../bench/service.ts',
        '../../bench/synthetic-managers.ts',
        '../../bench/autocannon.d.ts',
      ],
    }),
  );
  const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', config], { stdio: 'inherit' });
  // Type errors elsewhere in the tree still emit JavaScript; only a missing output is fatal.
  if (tsc.status !== 0)
    process.stderr.write('bench/service: tsc reported errors (see above); running what it emitted\n');
  mkdirSync(join(buildDir, 'build'), { recursive: true });
  copyFileSync(join(root, 'package.json'), join(buildDir, 'build', 'package.json'));
  return {
    child: join(buildDir, 'build', 'bench', 'service.js'),
    cli: join(buildDir, 'build', 'src', 'cli', 'bin.js'),
  };
}

type Exporters = { urls: string[]; close(): Promise<void> };

/** `targets` synthetic managers of `perTarget` queues each, on loopback, started `HISTORY_MS` ago. */
async function startExporters(targets: number, perTarget: number, startMs: number): Promise<Exporters> {
  const servers = await Promise.all(
    Array.from({ length: targets }, async (_, i) => {
      const queues = profiles(i, perTarget);
      const server = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        res.end(syntheticPage(queues, (Date.now() - startMs) / 1000));
      });
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      return server;
    }),
  );
  return {
    urls: servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/metrics`),
    close: async () => {
      await Promise.all(servers.map(closeServer));
    },
  };
}

async function startService(
  script: string,
  perTarget: number,
  urls: readonly string[],
  startMs: number,
  evaluation: string,
  flags: readonly string[] = NODE_FLAGS,
) {
  const running = run([
    ...flags,
    '--expose-gc',
    script,
    '--child',
    String(startMs),
    String(perTarget),
    evaluation,
    ...urls,
  ]);
  const result = await firstLine(running.proc, (line) => JSON.parse(line) as ChildResult);
  return { ...running, result };
}

/** RSS every second for `SETTLE_SECONDS`; the settled value is the median of the last 10 samples. */
async function settledRss(pid: number): Promise<{ first: number; settled: number }> {
  const samples: number[] = [];
  for (let i = 0; i < SETTLE_SECONDS; i++) {
    samples.push(rssOf(pid));
    await new Promise((done) => setTimeout(done, 1000));
  }
  const tail = samples.slice(-10).sort((a, b) => a - b);
  return { first: samples[0] ?? Number.NaN, settled: tail[Math.floor(tail.length / 2)] ?? Number.NaN };
}

type Load = { reqPerSec: number; p99Ms: number; bytesPerReq: number; failures: number };

async function load(url: string, seconds: number, headers: Record<string, string>): Promise<Load> {
  const { default: autocannon } = await import('autocannon');
  const r = await autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: seconds, headers });
  return {
    reqPerSec: r.requests.average,
    p99Ms: r.latency.p99,
    bytesPerReq: r.throughput.average / Math.max(1, r.requests.average),
    failures: r.non2xx + r.errors + r.timeouts,
  };
}

/**
 * The contrast for clients without compression: the report's uncompressed bytes served by a bare fastify route
 * (a fresh process, nothing else in it) against its own `/healthz`, the same rounds: what the response's size
 * alone costs over loopback on this machine.
 */
async function bareContrast(serviceBase: string, rows: string[]): Promise<void> {
  const bytes = Buffer.from(
    await (
      await fetch(`${serviceBase}/api/v1/diagnosis`, { headers: { 'accept-encoding': 'identity' } })
    ).arrayBuffer(),
  );
  mkdirSync(buildDir, { recursive: true });
  const file = join(buildDir, 'report.json');
  writeFileSync(file, bytes);
  const script = [
    "import Fastify from 'fastify';",
    "import { readFileSync } from 'node:fs';",
    `const body = readFileSync(${JSON.stringify(file)});`,
    'const app = Fastify();',
    "app.get('/healthz', async () => 'ok');",
    "app.get('/report', async (_request, reply) => reply.type('application/json').send(body));",
    "const address = await app.listen({ host: '127.0.0.1', port: 0 });",
    'console.log(address);',
  ].join('\n');
  const proc = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const base = await firstLine(proc, (line) => (line.startsWith('http://') ? line.trim() : undefined));
    await load(`${base}/healthz`, 1, {});
    await load(`${base}/report`, 1, {});
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const healthz = await load(`${base}/healthz`, ROUND_SECONDS, {});
      const report = await load(`${base}/report`, ROUND_SECONDS, {});
      ratios.push(report.reqPerSec / healthz.reqPerSec);
    }
    rows.push(
      `| contrast: the same ${(bytes.length / 1024).toFixed(0)} KiB uncompressed from a bare fastify route ÷ its /healthz | ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) | | |`,
    );
  } finally {
    proc.kill('SIGTERM');
  }
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

async function driver(): Promise<void> {
  const { child: script, cli } = compile();
  const startMs = Date.now() - HISTORY_MS;
  const rows: string[] = ['| measurement | value | goal | |', '|---|---|---|---|'];
  const notes: string[] = [];
  if (!process.argv.includes('--memory-only')) await serving(script, startMs, rows, notes);
  if (!process.argv.includes('--serving-only')) await memory(script, cli, startMs, rows);
  process.stdout.write(
    `\nService benchmark: Node ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg()[0]?.toFixed(1)} at the end; ` +
      `autocannon ${CONNECTIONS} connections on loopback, ${ROUNDS} rounds of ${ROUND_SECONDS} s per case, cases alternating.\n\n` +
      `${rows.join('\n')}\n${notes.map((n) => `\n${n}`).join('')}\n`,
  );
}

/** `/api/v1/diagnosis` with 100 queues against `/healthz`, per client encoding; ratios are medians of per-round ratios. */
async function serving(script: string, startMs: number, rows: string[], notes: string[]): Promise<void> {
  const exporters = await startExporters(10, 10, startMs);
  const service = await startService(script, 10, exporters.urls, startMs, DEFAULT_EVALUATION_INTERVAL);
  const base = `http://127.0.0.1:${service.result.port}`;
  const clients = [
    { name: 'client accepts gzip (Go, Prometheus, Grafana)', headers: { 'accept-encoding': 'gzip' } },
    {
      name: 'client accepts gzip, deflate, br (browsers, curl --compressed)',
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    },
    { name: 'client without Accept-Encoding', headers: {} },
  ];
  const routes = [
    { name: 'GET /healthz', path: '/healthz' },
    { name: 'GET /api/v1/diagnosis', path: '/api/v1/diagnosis' },
    { name: 'GET / (the page)', path: '/' },
  ];
  const results = new Map<string, Load[]>();
  let rssUnderLoad = 0;
  let failures = 0;
  try {
    for (const c of clients) for (const r of routes) await load(`${base}${r.path}`, 1, c.headers); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (const [ci, c] of clients.entries()) {
        for (const [ri, r] of routes.entries()) {
          const l = await load(`${base}${r.path}`, ROUND_SECONDS, c.headers);
          failures += l.failures;
          results.set(`${ci}/${ri}`, [...(results.get(`${ci}/${ri}`) ?? []), l]);
          rssUnderLoad = Math.max(rssUnderLoad, rssOf(service.proc.pid ?? 0));
        }
      }
    }
    await bareContrast(base, rows);
  } finally {
    await service.stop();
    await exporters.close();
  }
  const s = service.result;
  for (const [ci, c] of clients.entries()) {
    const trivial = results.get(`${ci}/0`) ?? [];
    for (const [ri, r] of routes.entries()) {
      const loads = results.get(`${ci}/${ri}`) ?? [];
      const rps = median(loads.map((l) => l.reqPerSec));
      const p99 = Math.max(...loads.map((l) => l.p99Ms));
      const kib = median(loads.map((l) => l.bytesPerReq)) / 1024;
      const what = ri === 0 ? r.name : `${r.name} (${s.queues} queues, ${s.findings} findings)`;
      rows.push(`| ${what}, ${c.name} | ${rps.toFixed(0)} req/s, p99 ${p99} ms, ${kib.toFixed(1)} KiB/response | | |`);
      if (ri === 0) continue;
      const ratio = median(loads.map((d, i) => d.reqPerSec / (trivial[i]?.reqPerSec ?? Number.NaN)));
      rows.push(
        `| **ratio ${r.path} / healthz**, ${c.name} | **${ratio.toFixed(2)}** | >= ${GOALS.ratio} | ${verdict(ratio >= GOALS.ratio)} |`,
      );
    }
  }
  rows.push(`| RSS while serving 100 queues under load (max) | ${mib(rssUnderLoad)} | | |`);
  rows.push(
    `| an evaluation of ${s.queues} queues after the first (the service's memory carried; evaluations run every ${DEFAULT_EVALUATION_INTERVAL} during the rounds) | ${s.evaluationMs.toFixed(0)} ms | | |`,
  );
  notes.push(
    `Report: ${(s.reportBytes / 1024).toFixed(0)} KiB of JSON for ${s.queues} queues. Requests failed (non-2xx, errors, timeouts): ${failures}.`,
  );
}

/**
 * RSS of the built CLI idle, and of the service holding 50 queues × 30 minutes of history: with Node's
 * defaults, and with the young generation capped (`--max-semi-space-size=2`, e.g. through NODE_OPTIONS):
 * the evaluation allocates in bursts, and by default V8 keeps up to 32 MiB of young generation committed.
 */
async function memory(script: string, cli: string, startMs: number, rows: string[]): Promise<void> {
  await importCosts(rows);
  const variants = NODE_FLAGS.length > 0 ? [NODE_FLAGS] : [[], ['--max-semi-space-size=2']];
  for (const flags of variants) await memoryWith(flags, script, cli, startMs, rows);
}

/**
 * What the stack costs before any of this service's code: the RSS of a fresh Node process after GC, bare and
 * with each of the two frameworks the service cannot do without imported (each alone, median of 3 processes).
 */
async function importCosts(rows: string[]): Promise<void> {
  const rssWith = (module: string | undefined): number => {
    const script = [
      module === undefined ? '' : `await import(${JSON.stringify(module)});`,
      'for (let i = 0; i < 4; i++) { globalThis.gc(); await new Promise((done) => setTimeout(done, 1000)); }',
      'console.log(process.memoryUsage().rss);',
    ].join('\n');
    const runs = [0, 1, 2].map(() => {
      const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { cwd: root });
      return Number(String(r.stdout).trim());
    });
    return median(runs);
  };
  const bare = rssWith(undefined);
  rows.push(`| RSS of a bare Node process after GC | ${mib(bare)} | | |`);
  for (const module of ['fastify', 'prom-client']) {
    rows.push(`| RSS added by importing ${module} alone | ${mib(rssWith(module) - bare)} | | |`);
  }
}

async function memoryWith(
  flags: readonly string[],
  script: string,
  cli: string,
  startMs: number,
  rows: string[],
): Promise<void> {
  const label = flags.length === 0 ? 'Node defaults' : flags.join(' ');
  const idleExporter = await startExporters(1, 0, startMs);
  const idle = run([
    ...NODE_FLAGS,
    cli,
    'serve',
    '--target',
    ...idleExporter.urls,
    '--listen',
    '127.0.0.1:0',
    '--log-level',
    'info',
  ]);
  try {
    const listen = await firstLine(idle.proc, (l) => {
      const entry = JSON.parse(l) as { msg?: string; listen?: string };
      return entry.msg === 'listening' ? entry.listen : undefined;
    });
    for (let i = 0; i < 200; i++) {
      if ((await fetch(`http://${listen}/readyz`)).status === 200) break;
      await new Promise((done) => setTimeout(done, 50));
    }
    const rss = await settledRss(idle.proc.pid ?? 0);
    rows.push(
      `| RSS idle: \`serve --target\` (built CLI, fresh process), ${label}, at start / settled | ${mib(rss.first)} / **${mib(rss.settled)}** | <= ${GOALS.idleMiB} MiB | ${verdict(rss.settled <= GOALS.idleMiB * MiB)} |`,
    );
  } finally {
    await idle.stop();
    await idleExporter.close();
  }

  const exporters = await startExporters(5, 10, startMs);
  const history = await startService(script, 10, exporters.urls, startMs, '15s', flags);
  try {
    const rss = await settledRss(history.proc.pid ?? 0);
    const h = history.result;
    rows.push(
      `| RSS with ${h.queues} queues × 30 min at 15 s (${h.series} series, ${h.samples} samples; heap ${mib(h.heapUsedBytes)}), ${label}, after GC / settled | ${mib(h.rssBytes)} / **${mib(rss.settled)}** | <= ${GOALS.historyMiB} MiB | ${verdict(rss.settled <= GOALS.historyMiB * MiB)} |`,
    );
    rows.push(`| one evaluation of ${h.queues} queues, ${label} | ${h.evaluationMs.toFixed(0)} ms | | |`);
  } finally {
    await history.stop();
    await exporters.close();
  }
}

if (process.argv[2] === '--child') {
  await child(process.argv.slice(3));
} else {
  await driver();
}
