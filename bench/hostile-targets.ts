/**
 * Hostile targets against the real service. For each kind of `HOSTILE_KINDS` (test/support/hostile-targets.ts),
 * and for two large targets that are not hostile (the most queues within the default series and queue limits, and
 * 1,000 queues with the limits raised), the built CLI (`serve --target <healthy> --target <other>`, scraping and
 * evaluating every 2 s) runs for a bounded time, and is compared with a baseline run of the healthy target alone.
 * Per case, measured from outside the service:
 *
 * - peak RSS of the service process (`VmHWM`, read just before SIGTERM);
 * - `/healthz` latency, p50 / p99 / max of a probe every 50 ms from the first answer on (failed probes counted);
 * - `/readyz`: whether it became ready, and whether it stayed ready afterwards;
 * - the healthy target's verdicts at the end (per queue: status and the rules of its findings), against the
 *   baseline's;
 * - the hostile target's error codes in `/api/v1/targets` (polled every second);
 * - SIGTERM: milliseconds from the signal to the exit, and the exit code;
 * - from the service's own metrics: the mean evaluation time, the evaluations that failed, and the healthy
 *   target's failed scrapes.
 *
 * The targets run in a separate process (this file with `--serve-targets <case>`), so that making their pages does
 * not delay the probes. The cardinality bomb (1,000,000 series) has goals of its own (below the table): ready
 * throughout, `/healthz` p99 under 100 ms, peak RSS under the memory limit of the deployment that scrapes many
 * targets (deploy/standalone), the healthy verdicts unchanged, exit 0.
 *
 * Exit code 1 when a case crashes the service (it exits before SIGTERM, or not with 0 after it) or changes the
 * healthy target's verdicts, or when the baseline has no finding to compare.
 *
 * With `--memory-limit SIZE` (the sidecar's: `192Mi`) every service runs with `WQD_MEMORY_LIMIT`, so its limits are
 * those its memory budget gives (src/service/memory-budget.ts), and with `WQD_RETENTION=4m`, so that a series holds
 * as many samples at the 2 s interval as the sidecar's at 15 s for 30 minutes (121); a case that churns new series
 * within them is added
 * (the churning kind's 9,999 series a page pass the budget's series limit), and the goal below the table is the
 * budget's: peak RSS under it in every case.
 *
 * Run: `npm run bench:hostile` (about 7 minutes: each case waits for its start on the engine's grid). `--seconds N`: time per case (default 15); `--case TEXT[,TEXT...]`: only
 * the cases whose name contains one of the TEXTs (and the baseline); `--memory-limit SIZE`: see above.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { Report } from '../src/diagnosis/report.js';
import { EVALUATION_INTERVAL_MS } from '../src/diagnosis/rule.js';
import { staticTargets } from '../src/discovery/static.js';
import type { Target } from '../src/discovery/target.js';
import { pageSamples } from '../src/exposition/parsed-page.js';
import { keepFamilies, parseExposition } from '../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES, DOCTOR, LABEL } from '../src/metrics/names.js';
import { DEFAULT_SCRAPE_QUEUE_LIMIT, DEFAULT_SCRAPE_SERIES_LIMIT } from '../src/scrape/scrape-settings.js';
import { deriveLimits } from '../src/service/memory-budget.js';
import type { TargetsView } from '../src/service/target-status.js';
import { targetNameOf } from '../src/service/target-status.js';
import { PROMETHEUS_CONTENT_TYPE } from '../src/simulate/recording-writer.js';
import { parseDuration } from '../src/util/duration.js';
import { parseMemoryQuantity } from '../src/util/memory-quantity.js';
import {
  CARDINALITY_BOMB,
  churningHandler,
  HOSTILE_KINDS,
  healthyTargetHandler,
} from '../test/support/hostile-targets.js';
import { freePort, type LocalServer, startHttpServer, waitFor } from '../test/support/local-server.js';
import { builtCli, median, peakRssOf, type Running, run } from './service-process.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

/**
 * Every service starts this long before a step of the engine's grid (`EVALUATION_INTERVAL_MS`, on the wall clock):
 * findings first show at the first step with a few scrapes behind it, so every run's verdicts at the end rest on
 * the same span of data, whatever the moment it started.
 */
const START_BEFORE_STEP_MS = 8_000;
const SCRAPE_INTERVAL = '2s';
/** With a memory budget: the retention that holds the sidecar's 121 samples a series at `SCRAPE_INTERVAL`. */
const BUDGET_RETENTION = '4m';
const EVALUATION_INTERVAL = '2s';
const HEALTHZ_EVERY_MS = 50;
const READYZ_EVERY_MS = 250;
const TARGETS_EVERY_MS = 1_000;
/** The service must answer `/healthz` within this long after it is started. */
const SERVICE_START_TIMEOUT_MS = 60_000;
/** A probe that takes longer counts as failed. */
const PROBE_TIMEOUT_MS = 10_000;
/** After SIGTERM the service has this long before it is killed (its own shutdown deadline is 10 s). */
const SIGTERM_DEADLINE_MS = 15_000;
const MiB = 1024 * 1024;
const BOMB_HEALTHZ_P99_GOAL_MS = 100;
/** The deployment that scrapes many targets (the sidecar scrapes only its own controller). */
const STANDALONE_DEPLOYMENT = 'deploy/standalone/deployment.yaml';
/** Queues of the large target served with raised limits. */
const LARGE_TARGET_QUEUES = 1_000;
const UP = 'none (up)';

type BenchCase = {
  readonly name: string;
  readonly serves: string;
  /** The hostile target's handler; none for the baseline. */
  readonly handler?: (now: () => number) => http.RequestListener;
  /** Error codes the hostile target's health should show (`UP` for a successful scrape). */
  readonly expectedCodes: readonly string[];
  /** The service's environment beyond this process's (`WQD_*` settings). */
  readonly env?: Readonly<Record<string, string>>;
};

/** Series of the diagnostic families on the page of a synthetic manager with `queues` queues. */
function seriesOfQueues(queues: number): number {
  const page = syntheticPage(profiles(1, queues), 3600);
  return parseExposition(page, { keep: keepFamilies(DIAGNOSTIC_FAMILIES) }).series.count;
}

/** The most queues of a synthetic manager within the default series and queue limits. */
function queuesAtDefaultLimits(): number {
  let [fits, over] = [0, DEFAULT_SCRAPE_QUEUE_LIMIT + 1];
  while (over - fits > 1) {
    const mid = Math.floor((fits + over) / 2);
    if (seriesOfQueues(mid) <= DEFAULT_SCRAPE_SERIES_LIMIT) fits = mid;
    else over = mid;
  }
  return fits;
}

/** A synthetic manager with `queues` queues beside the healthy target (not hostile: it should be diagnosed too). */
function largeTargetCase(name: string, queues: number, env?: Readonly<Record<string, string>>): BenchCase {
  const profilesOfTarget = profiles(1, queues);
  const series = seriesOfQueues(queues);
  return {
    name,
    serves: `a synthetic manager with ${queues.toLocaleString('en-US')} queues, ${series.toLocaleString('en-US')} series`,
    handler: () => {
      const startedMs = Date.now();
      return (_req, res) => {
        res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
        res.end(syntheticPage(profilesOfTarget, 3600 + (Date.now() - startedMs) / 1000));
      };
    },
    expectedCodes: [UP],
    ...(env !== undefined ? { env } : {}),
  };
}

/** The series limit a memory budget gives the benchmark's service: two static targets scraped every 2 s. */
function budgetSeriesLimit(memoryLimit: string): number {
  return deriveLimits(parseMemoryQuantity(memoryLimit), {
    targets: 2,
    concurrency: 8,
    intervalMs: parseDuration(SCRAPE_INTERVAL),
    retentionMs: parseDuration(BUDGET_RETENTION),
  }).limits.seriesLimit;
}

function benchCases(memoryLimit: string | undefined): BenchCase[] {
  const atLimits = queuesAtDefaultLimits();
  const largeSeries = seriesOfQueues(LARGE_TARGET_QUEUES);
  const budgetCases: BenchCase[] = [];
  if (memoryLimit !== undefined) {
    const churn = budgetSeriesLimit(memoryLimit) - 1;
    budgetCases.push({
      name: "new series every scrape, within the budget's series limit",
      serves: `${churn.toLocaleString('en-US')} new series at every scrape`,
      handler: () => churningHandler(churn),
      expectedCodes: [UP],
    });
  }
  return [
    { name: 'baseline: the healthy target alone', serves: '', expectedCodes: [] },
    ...HOSTILE_KINDS.map((kind) => ({
      name: kind.name,
      serves: kind.serves,
      handler: kind.handler,
      expectedCodes: [...new Set([0, 1].map((n) => kind.errorAfterScrape(n) ?? UP))],
    })),
    largeTargetCase(`${atLimits} queues, at the default limits`, atLimits),
    largeTargetCase(`${LARGE_TARGET_QUEUES.toLocaleString('en-US')} queues, limits raised`, LARGE_TARGET_QUEUES, {
      WQD_SCRAPE_SERIES_LIMIT: String(largeSeries),
      WQD_SCRAPE_QUEUE_LIMIT: String(LARGE_TARGET_QUEUES),
    }),
    ...budgetCases,
  ];
}

// ---------------------------------------------------------------------------------------------------
// The targets process: the healthy target and the case's hostile one, until SIGTERM.

async function serveTargets(caseIndex: number, memoryLimit: string | undefined): Promise<void> {
  const benchCase = benchCases(memoryLimit)[caseIndex];
  if (benchCase === undefined) throw new Error(`no case ${caseIndex}`);
  const servers: LocalServer[] = [await startHttpServer(healthyTargetHandler(Date.now))];
  if (benchCase.handler !== undefined) servers.push(await startHttpServer(benchCase.handler(Date.now)));
  const [healthy, hostile] = servers.map((s) => `${s.origin}/metrics`);
  process.stdout.write(`${JSON.stringify({ healthy, hostile })}\n`);
  process.once('SIGTERM', () => {
    void Promise.all(servers.map((s) => s.close())).then(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------------
// The driver.

type Urls = { healthy: string; hostile?: string };

type Outcome = {
  readonly peakRssBytes: number;
  readonly healthzMs: readonly number[];
  readonly healthzFailures: number;
  readonly becameReady: boolean;
  readonly stayedReady: boolean;
  /** Per healthy queue (`name/controller`): `status: rules`. */
  readonly verdicts: readonly string[];
  readonly hostileCodes: readonly string[];
  /** The service exited before SIGTERM. */
  readonly exitedEarly: boolean;
  readonly sigterm: { readonly ms: number; readonly exit: string };
  readonly stats: ServiceStats;
  readonly output: string;
};

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, timeout: PROBE_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('probe timed out')));
    req.on('error', reject);
  });
}

async function getJson<T>(url: string): Promise<T> {
  const { status, body } = await get(url);
  if (status !== 200) throw new Error(`GET ${url}: HTTP ${status}`);
  return JSON.parse(body) as T;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** What `promise` settles with, or undefined once `ms` have passed first (the timer is cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((done) => {
    timer = setTimeout(() => done(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `task` every `everyMs` (or back to back when it takes longer) until `stop` aborts. */
async function every(everyMs: number, stop: AbortSignal, task: () => Promise<void>): Promise<void> {
  while (!stop.aborted) {
    const next = performance.now() + everyMs;
    await task();
    await sleep(Math.max(0, next - performance.now()));
  }
}

/** Starts the targets process of a case and reads its URLs. */
async function startTargets(
  caseIndex: number,
  memoryLimit: string | undefined,
): Promise<{ running: Running; urls: Urls }> {
  const self = fileURLToPath(import.meta.url);
  const running = run([
    ...process.execArgv,
    self,
    '--serve-targets',
    String(caseIndex),
    ...(memoryLimit !== undefined ? [memoryLimit] : []),
  ]);
  const urls = await new Promise<Urls>((resolve, reject) => {
    let buffer = '';
    running.proc.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const newline = buffer.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(buffer.slice(0, newline)) as Urls);
    });
    void running.exited.then(() => reject(new Error('the targets process exited before it served')));
  });
  return { running, urls };
}

/** Starts the service on a free port (another one when the port was taken meanwhile) once it answers. */
async function startService(
  cli: string,
  urls: Urls,
  env: Readonly<Record<string, string>> = {},
): Promise<{ service: Running; base: string }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const targets = [urls.healthy, ...(urls.hostile !== undefined ? [urls.hostile] : [])];
    const service = run(
      [
        cli,
        'serve',
        ...targets.flatMap((url) => ['--target', url]),
        '--listen',
        `127.0.0.1:${port}`,
        '--scrape-interval',
        SCRAPE_INTERVAL,
        '--evaluation-interval',
        EVALUATION_INTERVAL,
        '--log-level',
        'warn',
      ],
      { env: { ...process.env, ...env } },
    );
    const base = `http://127.0.0.1:${port}`;
    const state = await waitFor(
      `${base}/healthz to answer`,
      async () => {
        if (service.proc.exitCode !== null || service.proc.signalCode !== null) return 'exited';
        return (await get(`${base}/healthz`)).status === 200 ? 'answers' : undefined;
      },
      SERVICE_START_TIMEOUT_MS,
      20,
    ).catch(async (error: unknown) => {
      await service.stop();
      throw error;
    });
    if (state === 'answers') return { service, base };
    if (attempt < 2 && service.output().includes('EADDRINUSE')) continue;
    throw new Error(`the service exited before it answered:\n${service.output()}`);
  }
}

/** Per healthy queue, `name/controller status: rules` (the rules sorted), sorted. */
function healthyVerdicts(report: Report, healthyTarget: string): string[] {
  return report.queues
    .filter((q) => q.queue.target === healthyTarget)
    .map((q) => {
      const rules = q.findings.map((f) => `${f.rule}/${f.severity}`).sort();
      return `${q.queue.name}/${q.queue.controller} ${q.status}: ${rules.join(', ') || '-'}`;
    })
    .sort();
}

type ServiceStats = {
  readonly evaluationMeanMs: number;
  readonly evaluationsFailed: number;
  /** Failed scrapes of the healthy target, as `code ×count`. */
  readonly healthyScrapeErrors: readonly string[];
};

/** From the service's own metrics: evaluations, and the healthy target's failed scrapes. */
async function serviceStats(base: string, healthyTarget: string): Promise<ServiceStats> {
  const samples = pageSamples(parseExposition((await get(`${base}/metrics`)).body));
  const value = (name: string) => samples.find((s) => s.name === name)?.value ?? Number.NaN;
  return {
    evaluationMeanMs: (1000 * value(`${DOCTOR.evaluationDuration}_sum`)) / value(`${DOCTOR.evaluationDuration}_count`),
    evaluationsFailed: value(DOCTOR.evaluationErrors),
    healthyScrapeErrors: samples
      .filter((s) => s.name === DOCTOR.scrapeErrors && s.labels[LABEL.target] === healthyTarget && s.value > 0)
      .map((s) => `${s.labels[LABEL.code]} ×${s.value}`),
  };
}

/** Probes the running service for `seconds`, reads its verdicts and memory, then times its exit on SIGTERM. */
async function measure(service: Running, base: string, urls: Urls, seconds: number): Promise<Outcome> {
  const stop = new AbortController();
  const healthzMs: number[] = [];
  let healthzFailures = 0;
  const readiness: boolean[] = [];
  const hostileCodes = new Set<string>();
  const probes = Promise.all([
    every(HEALTHZ_EVERY_MS, stop.signal, async () => {
      const started = performance.now();
      try {
        const { status } = await get(`${base}/healthz`);
        if (status !== 200) healthzFailures++;
        else healthzMs.push(performance.now() - started);
      } catch {
        healthzFailures++;
      }
    }),
    every(READYZ_EVERY_MS, stop.signal, async () => {
      try {
        readiness.push((await get(`${base}/readyz`)).status === 200);
      } catch {
        readiness.push(false);
      }
    }),
    every(TARGETS_EVERY_MS, stop.signal, async () => {
      try {
        const view = await getJson<TargetsView>(`${base}/api/v1/targets`);
        const hostile = view.mode === 'scrape' ? view.targets.find((t) => t.url === urls.hostile) : undefined;
        if (hostile?.lastScrape != null) hostileCodes.add(hostile.lastError?.code ?? UP);
      } catch {
        // counted by the /healthz probe
      }
    }),
  ]);
  const exitedEarly = (await within(service.exited, seconds * 1000)) !== undefined;
  stop.abort();
  await probes;

  let verdicts: string[] = [];
  let stats: ServiceStats = { evaluationMeanMs: Number.NaN, evaluationsFailed: Number.NaN, healthyScrapeErrors: [] };
  let peakRssBytes = Number.NaN;
  if (!exitedEarly) {
    const healthyTarget = targetNameOf(staticTargets([urls.healthy])[0] as Target);
    verdicts = healthyVerdicts(await getJson<Report>(`${base}/api/v1/diagnosis`), healthyTarget);
    stats = await serviceStats(base, healthyTarget);
    peakRssBytes = peakRssOf(service.proc.pid ?? 0);
  }
  const signalled = performance.now();
  service.proc.kill('SIGTERM');
  const exit = await within(service.exited, SIGTERM_DEADLINE_MS);
  const sigtermMs = performance.now() - signalled;
  if (exit === undefined) {
    service.proc.kill('SIGKILL');
    await service.exited;
  }
  const firstReady = readiness.indexOf(true);
  return {
    peakRssBytes,
    healthzMs,
    healthzFailures,
    becameReady: firstReady >= 0,
    stayedReady: firstReady >= 0 && readiness.slice(firstReady).every(Boolean),
    verdicts,
    hostileCodes: [...hostileCodes].sort(),
    exitedEarly,
    sigterm: {
      ms: sigtermMs,
      exit: exit === undefined ? 'killed' : exit.signal !== null ? exit.signal : String(exit.code),
    },
    stats,
    output: service.output(),
  };
}

async function runCase(
  cli: string,
  benchCase: BenchCase,
  caseIndex: number,
  seconds: number,
  memoryLimit: string | undefined,
): Promise<Outcome> {
  const targets = await startTargets(caseIndex, memoryLimit);
  try {
    await sleep(EVALUATION_INTERVAL_MS - ((Date.now() + START_BEFORE_STEP_MS) % EVALUATION_INTERVAL_MS));
    const env = {
      ...benchCase.env,
      ...(memoryLimit !== undefined ? { WQD_MEMORY_LIMIT: memoryLimit, WQD_RETENTION: BUDGET_RETENTION } : {}),
    };
    const { service, base } = await startService(cli, targets.urls, env);
    try {
      return await measure(service, base, targets.urls, seconds);
    } finally {
      await service.stop();
    }
  } finally {
    await targets.running.stop();
  }
}

/** `resources.limits.memory` of the service's container in the standalone deployment, in bytes. */
function standaloneMemoryLimitBytes(): number {
  const deployment = parseYaml(readFileSync(new URL(`../${STANDALONE_DEPLOYMENT}`, import.meta.url), 'utf8')) as {
    spec: { template: { spec: { containers: Array<{ name: string; resources?: { limits?: { memory?: string } } }> } } };
  };
  const container = deployment.spec.template.spec.containers.find((c) => c.name === 'workqueue-doctor');
  const quantity = /^(\d+)(Mi|Gi)$/.exec(container?.resources?.limits?.memory ?? '');
  if (quantity === null) throw new Error(`${STANDALONE_DEPLOYMENT}: no memory limit in Mi or Gi`);
  return Number(quantity[1]) * (quantity[2] === 'Gi' ? 1024 : 1) * MiB;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '-');
const mib = (bytes: number) => (Number.isFinite(bytes) ? (bytes / MiB).toFixed(0) : '-');
const crashed = (o: Outcome) => o.exitedEarly || o.sigterm.exit !== '0';

async function driver(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      seconds: { type: 'string', default: '15' },
      case: { type: 'string' },
      'memory-limit': { type: 'string' },
    },
  });
  const memoryLimit = values['memory-limit'];
  const seconds = Number(values.seconds);
  if (!(seconds > 0)) throw new Error(`--seconds must be a positive number, got ${values.seconds}`);
  const cli = builtCli();
  const cases = benchCases(memoryLimit);
  const chosen = cases
    .map((c, index) => ({ c, index }))
    .filter(
      ({ c, index }) =>
        index === 0 || values.case === undefined || values.case.split(',').some((text) => c.name.includes(text)),
    );

  const outcomes: Array<{ c: BenchCase; o: Outcome }> = [];
  for (const { c, index } of chosen) {
    process.stderr.write(`${c.name}…\n`);
    outcomes.push({ c, o: await runCase(cli, c, index, seconds, memoryLimit) });
  }
  const baseline = outcomes[0]?.o as Outcome;
  const unchanged = (o: Outcome) => JSON.stringify(o.verdicts) === JSON.stringify(baseline.verdicts);

  const rows = [
    '| case | peak RSS MiB | /healthz p50 / p99 / max ms | ready | healthy verdicts unchanged | hostile target error code | SIGTERM → exit |',
    '|---|---|---|---|---|---|---|',
  ];
  const notes: string[] = [];
  let failed = false;
  for (const [i, { c, o }] of outcomes.entries()) {
    const latency = `${ms(median(o.healthzMs))} / ${ms(quantile(o.healthzMs, 0.99))} / ${ms(Math.max(...o.healthzMs))}`;
    const probeFailures = o.healthzFailures > 0 ? ` (${o.healthzFailures} failed)` : '';
    const ready = !o.becameReady ? 'no' : o.stayedReady ? 'yes' : 'yes, then not';
    const same = i === 0 ? '(baseline)' : unchanged(o) ? 'yes' : '**no**';
    const codes =
      i === 0
        ? '-'
        : `${o.hostileCodes.map((code) => `\`${code}\``).join(', ') || 'not scraped'}${
            JSON.stringify(o.hostileCodes) === JSON.stringify([...c.expectedCodes].sort())
              ? ''
              : ` (${memoryLimit === undefined ? 'expected' : 'at the fixed limits'} ${c.expectedCodes.join(', ')})`
          }`;
    const exit = `${o.sigterm.ms.toFixed(0)} ms, ${o.sigterm.exit}`;
    rows.push(
      `| ${c.name} | ${mib(o.peakRssBytes)} | ${latency}${probeFailures} | ${ready} | ${same} | ${codes} | ${crashed(o) ? `**${exit}**` : exit} |`,
    );
    notes.push(
      `- ${c.name}${c.serves === '' ? '' : ` (${c.serves})`}: ${o.verdicts.length} healthy queues; evaluation ${ms(o.stats.evaluationMeanMs)} ms on average, ${o.stats.evaluationsFailed} failed; failed scrapes of the healthy target: ${o.stats.healthyScrapeErrors.join(', ') || 'none'}.`,
    );
    if (o.exitedEarly) notes.push(`  The service exited before SIGTERM:\n\n\`\`\`\n${o.output.trim()}\n\`\`\``);
    if (i > 0 && !unchanged(o)) {
      notes.push(`  Healthy verdicts: ${o.verdicts.join('; ')}\n  Baseline: ${baseline.verdicts.join('; ')}`);
    }
    if (crashed(o) || (i > 0 && !unchanged(o))) failed = true;
  }
  if (!baseline.verdicts.some((v) => !v.endsWith(': -'))) {
    notes.push('- The baseline has no finding: the verdict comparison compares nothing.');
    failed = true;
  }

  const bomb = outcomes.find(({ c }) => c.name === CARDINALITY_BOMB.name)?.o;
  const goals: string[] = [];
  if (memoryLimit !== undefined) {
    const budget = parseMemoryQuantity(memoryLimit);
    const over = outcomes.filter(({ o }) => !(o.peakRssBytes < budget)).map(({ c }) => c.name);
    goals.push(
      `Memory budget ${memoryLimit}: peak RSS under it in every case: ${over.length === 0 ? 'met' : `**missed** (${over.join('; ')})`}.`,
    );
    if (over.length > 0) failed = true;
  } else if (bomb !== undefined) {
    const p99 = quantile(bomb.healthzMs, 0.99);
    const memoryLimit = standaloneMemoryLimitBytes();
    const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
    goals.push(
      `Cardinality bomb goals: ready throughout: ${verdict(bomb.stayedReady)}; /healthz p99 ${ms(p99)} ms < ${BOMB_HEALTHZ_P99_GOAL_MS} ms: ${verdict(p99 < BOMB_HEALTHZ_P99_GOAL_MS)}; ` +
        `peak RSS ${mib(bomb.peakRssBytes)} MiB < the memory limit of ${STANDALONE_DEPLOYMENT} (${mib(memoryLimit)} MiB): ${verdict(bomb.peakRssBytes < memoryLimit)}; ` +
        `healthy verdicts unchanged: ${verdict(unchanged(bomb))}; exit 0 on SIGTERM: ${verdict(bomb.sigterm.exit === '0')}.`,
    );
  }
  process.stdout.write(
    `\nHostile targets: Node ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg()[0]?.toFixed(1)} at the end; ` +
      `\`serve\` with --scrape-interval ${SCRAPE_INTERVAL} --evaluation-interval ${EVALUATION_INTERVAL}${memoryLimit !== undefined ? ` and WQD_MEMORY_LIMIT=${memoryLimit} WQD_RETENTION=${BUDGET_RETENTION}` : ''}, ${seconds} s per case; ` +
      `/healthz probed every ${HEALTHZ_EVERY_MS} ms.\n\n${[rows, goals, notes]
        .map((lines) => lines.join('\n'))
        .filter((text) => text !== '')
        .join('\n\n')}\n`,
  );
  process.exitCode = failed ? 1 : 0;
}

if (process.argv[2] === '--serve-targets') {
  await serveTargets(Number(process.argv[3]), process.argv[4]);
} else {
  await driver();
  agent.destroy();
}
