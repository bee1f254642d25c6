/**
 * The service under load and abuse, measured from outside. The built CLI (`serve`) scrapes 10 synthetic controller
 * managers of 10 queues each (100 queues, `bench/synthetic-managers.ts`, served by a separate process: this file
 * with `--serve-targets`) and evaluates at its default interval; once it is ready, phases run one after the other,
 * each for a bounded time (`--seconds N`, default 10):
 *
 * 1. load: autocannon with 50 connections on `/api/v1/diagnosis`, on the page `/`, and on `/healthz`, as a client
 *    that accepts gzip;
 * 2. abuse: each phase of `bench/hostile-requests.ts` (100 KB URLs, 10,000 query parameters, path traversal in
 *    `/api/v1/queues/{id}`, methods other than GET, oversized headers, a body on GET), its requests in turn, each on
 *    a new connection, 50 at a time; then 1,000 slow clients trickling a header line a second, never ending their
 *    headers, until the service cuts them at its request timeout (the phase lasts at most `--seconds` plus that
 *    timeout plus 5 s; the clients still open then are released and counted as held).
 *
 * Throughout, a probe in a separate process (this file with `--probe`, so that the load generator does not delay
 * it) asks for `/healthz` every 20 ms on a new connection, without waiting for the previous answer, and times each
 * answer (one not received within 5 s fails). Per phase: requests per second, p50 and p99 latency (for the slow
 * clients: how long each was held), the statuses seen, the probe's p99 and max, the largest RSS of the service
 * (`VmRSS` every 100 ms) and whether it still answers `/healthz` and `/api/v1/diagnosis` after the phase. Prints a
 * markdown table.
 *
 * Exit code 1 when the service exits, stops answering, answers any request with 5xx, or an answer reveals a file of
 * the machine or the request (`revealed`).
 *
 * Run: `npm run bench:load` (about 2 minutes at the default `--seconds 10`).
 */
import http from 'node:http';
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { DEFAULT_EVALUATION_INTERVAL, DEFAULT_SCRAPE_INTERVAL } from '../src/config/service-defaults.js';
import type { Report } from '../src/diagnosis/report.js';
import { DEFAULT_LIMITS } from '../src/server/app.js';
import { startHttpServer, waitFor } from '../test/support/local-server.js';
import {
  describeAnswer,
  exchange,
  HOSTILE_PHASES,
  type HostileRequest,
  holdSlowClients,
  revealed,
} from './hostile-requests.js';
import { builtCli, firstLine, peakRssOf, type Running, rssOf, run } from './service-process.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

const TARGETS = 10;
const QUEUES_PER_TARGET = 10;
/** The synthetic managers have been running this long when the benchmark starts. */
const MANAGER_AGE_SECONDS = 3_600;
const CONNECTIONS = 50;
const LOAD_HEADERS = { 'accept-encoding': 'gzip' } as const;
const PROBE_EVERY_MS = 20;
const PROBE_TIMEOUT_MS = 5_000;
const RSS_EVERY_MS = 100;
const SLOW_CLIENTS = 1_000;
const SLOW_TRICKLE_MS = 1_000;
/** A hostile exchange without progress for this long ends as `timeout`. */
const EXCHANGE_TIMEOUT_MS = 10_000;
/** How long the service may take to answer after a phase, and to become ready at the start. */
const ANSWER_TIMEOUT_MS = 10_000;
const READY_TIMEOUT_MS = 120_000;
const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------------
// The targets process: the synthetic managers.

async function serveTargets(): Promise<void> {
  const startedMs = Date.now();
  const servers = await Promise.all(
    Array.from({ length: TARGETS }, (_, i) => {
      const queues = profiles(i, QUEUES_PER_TARGET);
      return startHttpServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
        response.end(syntheticPage(queues, MANAGER_AGE_SECONDS + (Date.now() - startedMs) / 1000));
      });
    }),
  );
  process.stdout.write(`${JSON.stringify(servers.map((s) => `${s.origin}/metrics`))}\n`);
  process.once('SIGTERM', () => void Promise.all(servers.map((s) => s.close())).then(() => process.exit(0)));
}

// ---------------------------------------------------------------------------------------------------
// The probe process: one line per `/healthz` request, `<start, epoch ms> <ms> <status, 0 when it failed>`.

function probe(origin: string): void {
  const url = new URL('/healthz', origin);
  setInterval(() => {
    const at = Date.now();
    const started = performance.now();
    let reported = false;
    const report = (status: number): void => {
      if (reported) return;
      reported = true;
      process.stdout.write(`${at} ${(performance.now() - started).toFixed(3)} ${status}\n`);
    };
    const request = http.get(url, { agent: false, timeout: PROBE_TIMEOUT_MS }, (response) => {
      response.resume();
      response.on('end', () => report(response.statusCode ?? 0));
      response.on('error', () => report(0));
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => report(0));
  }, PROBE_EVERY_MS);
}

type ProbeSample = { readonly at: number; readonly ms: number; readonly status: number };

function startProbe(origin: string): { running: Running; samples: ProbeSample[] } {
  const running = run([...process.execArgv, fileURLToPath(import.meta.url), '--probe', origin]);
  const samples: ProbeSample[] = [];
  if (running.proc.stdout !== null) {
    createInterface({ input: running.proc.stdout }).on('line', (line) => {
      const [at, ms, status] = line.split(' ').map(Number);
      if (at !== undefined && ms !== undefined && status !== undefined) samples.push({ at, ms, status });
    });
  }
  return { running, samples };
}

// ---------------------------------------------------------------------------------------------------
// Driver.

type PhaseResult = {
  readonly name: string;
  /** Undefined for the slow clients (connections held, not requests). */
  readonly requestsPerSecond?: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Status (or how an exchange failed) → count. */
  readonly statuses: ReadonlyMap<string, number>;
  /** Hostile requests answered otherwise than `bench/hostile-requests.ts` expects, by name. */
  readonly unexpected: ReadonlyMap<string, number>;
  /** Answers that revealed a file or the request. */
  readonly revealing: number;
};

type MeasuredPhase = PhaseResult & {
  readonly window: { readonly fromMs: number; readonly toMs: number };
  readonly peakRssBytes: number;
  readonly answeringAfter: string;
};

function count(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

async function loadPhase(origin: string, path: string, seconds: number): Promise<PhaseResult> {
  const result = await autocannon({
    url: `${origin}${path}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: LOAD_HEADERS,
  });
  const statuses = new Map<string, number>();
  for (const [status, { count: n }] of Object.entries(result.statusCodeStats)) count(statuses, status, n);
  if (result.errors > 0) count(statuses, 'errors', result.errors);
  if (result.timeouts > 0) count(statuses, 'timeouts', result.timeouts);
  return {
    name: `load: GET ${path}`,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    statuses,
    unexpected: new Map(),
    revealing: 0,
  };
}

/** The phase's requests in turn, each on a new connection, `CONNECTIONS` at a time, for `seconds`. */
async function abusePhase(
  port: number,
  name: string,
  requests: readonly HostileRequest[],
  seconds: number,
): Promise<PhaseResult> {
  const until = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  const statuses = new Map<string, number>();
  const unexpected = new Map<string, number>();
  let revealing = 0;
  let next = 0;
  const client = async (): Promise<void> => {
    while (performance.now() < until) {
      const request = requests[next++ % requests.length] as HostileRequest;
      const result = await exchange(port, request.bytes, EXCHANGE_TIMEOUT_MS);
      latencies.push(result.ms);
      const seen = result.answers.map(describeAnswer);
      for (const answer of seen) count(statuses, String(answer.status));
      if (seen.length === 0) count(statuses, result.error ?? 'closed without an answer');
      if (!isDeepStrictEqual(seen, request.answers)) count(unexpected, request.name);
      if (result.answers.some((answer) => revealed(answer) !== undefined)) revealing += 1;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, client));
  return {
    name: `abuse: ${name}`,
    requestsPerSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    statuses,
    unexpected,
    revealing,
  };
}

/** 1,000 slow clients until the service has cut them all, or the phase's bound. */
async function slowClientsPhase(port: number, seconds: number): Promise<PhaseResult> {
  const slow = holdSlowClients(port, SLOW_CLIENTS, { trickleEveryMs: SLOW_TRICKLE_MS });
  const boundMs = seconds * 1000 + DEFAULT_LIMITS.requestTimeoutMs + 5_000;
  const bound = setTimeout(() => slow.release(), boundMs);
  const ends = await slow.ended;
  clearTimeout(bound);
  const statuses = new Map<string, number>();
  const unexpected = new Map<string, number>();
  let revealing = 0;
  for (const end of ends) {
    const status =
      end.closedBy === 'client'
        ? 'held to the end'
        : end.answer !== undefined
          ? String(end.answer.status)
          : end.closedBy === 'error'
            ? 'connection failed'
            : 'closed without an answer';
    count(statuses, status);
    const answer = end.answer === undefined ? undefined : describeAnswer(end.answer);
    if (!isDeepStrictEqual(answer, { status: 408, code: 'request_timeout' })) count(unexpected, 'a slow client');
    if (end.answer !== undefined && revealed(end.answer) !== undefined) revealing += 1;
  }
  const cut = ends.filter((end) => end.closedBy === 'server').map((end) => end.heldMs);
  return {
    name: `abuse: ${SLOW_CLIENTS.toLocaleString('en-US')} slow clients (held until cut)`,
    p50Ms: percentile(cut, 0.5),
    p99Ms: percentile(cut, 0.99),
    statuses,
    unexpected,
    revealing,
  };
}

/** `yes`, or why not: the service must be running and answer both routes with 200. */
async function answering(origin: string, service: Running): Promise<string> {
  if (service.proc.exitCode !== null || service.proc.signalCode !== null) {
    return `no: exited (${service.proc.exitCode ?? service.proc.signalCode})`;
  }
  for (const path of ['/healthz', '/api/v1/diagnosis']) {
    try {
      const response = await fetch(`${origin}${path}`, {
        headers: LOAD_HEADERS,
        signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
      });
      await response.arrayBuffer();
      if (response.status !== 200) return `no: ${path} answered ${response.status}`;
    } catch (error) {
      return `no: ${path}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return 'yes';
}

/** Runs `phase`, sampling the service's RSS, then checks that it still answers. */
async function measure(service: Running, origin: string, phase: () => Promise<PhaseResult>): Promise<MeasuredPhase> {
  const pid = service.proc.pid ?? 0;
  let peakRssBytes = rssOf(pid) || 0;
  const sampler = setInterval(() => {
    peakRssBytes = Math.max(peakRssBytes, rssOf(pid) || 0);
  }, RSS_EVERY_MS);
  const fromMs = Date.now();
  let result: PhaseResult;
  try {
    result = await phase();
  } finally {
    clearInterval(sampler);
  }
  const toMs = Date.now();
  const answeringAfter = await answering(origin, service);
  process.stderr.write(`bench/load: ${result.name} done; answering: ${answeringAfter}\n`);
  return { ...result, window: { fromMs, toMs }, peakRssBytes, answeringAfter };
}

async function startTargets(): Promise<{ running: Running; urls: string[] }> {
  const running = run([...process.execArgv, fileURLToPath(import.meta.url), '--serve-targets']);
  const urls = await firstLine(running.proc, (line) => JSON.parse(line) as string[]);
  return { running, urls };
}

async function startService(urls: readonly string[]): Promise<{ service: Running; origin: string }> {
  const service = run([builtCli(), 'serve', '--target', ...urls, '--listen', '127.0.0.1:0', '--log-level', 'info']);
  const listen = await firstLine(service.proc, (line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; listen?: string };
      return entry.msg === 'listening' ? entry.listen : undefined;
    } catch {
      return undefined;
    }
  });
  const origin = `http://${listen}`;
  await waitFor(
    'the first evaluation (/readyz)',
    async () => (await fetch(`${origin}/readyz`)).status === 200,
    READY_TIMEOUT_MS,
    100,
  );
  return { service, origin };
}

async function reportShape(origin: string): Promise<string> {
  const report = (await (await fetch(`${origin}/api/v1/diagnosis`)).json()) as Report;
  const findings = report.queues.reduce((n, q) => n + q.findings.length, 0);
  const bytes = Buffer.byteLength(JSON.stringify(report));
  return `${report.queues.length} queues, ${findings} findings, ${(bytes / 1024).toFixed(0)} KiB of JSON`;
}

const integer = (n: number) => Math.round(n).toLocaleString('en-US');
const milliseconds = (n: number) => (Number.isNaN(n) ? '–' : n < 10 ? `${n.toFixed(1)} ms` : `${integer(n)} ms`);

function statusesText(statuses: ReadonlyMap<string, number>): string {
  return [...statuses]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, n]) => `${status} ×${integer(n)}`)
    .join(', ');
}

function row(phase: MeasuredPhase, probes: readonly ProbeSample[]): string {
  const during = probes.filter((p) => p.at >= phase.window.fromMs && p.at < phase.window.toMs);
  const failed = during.filter((p) => p.status !== 200).length;
  const latencies = during.map((p) => p.ms);
  const healthzP99 = `${milliseconds(percentile(latencies, 0.99))}${failed > 0 ? ` (${failed} of ${during.length} failed)` : ''}`;
  return [
    '',
    phase.name,
    phase.requestsPerSecond === undefined ? '–' : integer(phase.requestsPerSecond),
    milliseconds(phase.p50Ms),
    milliseconds(phase.p99Ms),
    statusesText(phase.statuses),
    healthzP99,
    milliseconds(Math.max(...latencies)),
    `${(phase.peakRssBytes / MiB).toFixed(0)} MiB`,
    phase.answeringAfter,
    '',
  ].join(' | ');
}

async function driver(seconds: number): Promise<number> {
  const targets = await startTargets();
  let service: Running | undefined;
  let probe: { running: Running; samples: ProbeSample[] } | undefined;
  const phases: MeasuredPhase[] = [];
  let shapeAtStart = '';
  let shapeAtEnd = '';
  let peakRssBytes = Number.NaN;
  try {
    const started = await startService(targets.urls);
    service = started.service;
    const { origin } = started;
    const port = Number(new URL(origin).port);
    shapeAtStart = await reportShape(origin);
    probe = startProbe(origin);
    await waitFor('the first probe', () => (probe?.samples.length ?? 0) > 0, READY_TIMEOUT_MS);
    const steps: Array<() => Promise<PhaseResult>> = [
      ...['/api/v1/diagnosis', '/', '/healthz'].map((path) => () => loadPhase(origin, path, seconds)),
      ...HOSTILE_PHASES.map((p) => () => abusePhase(port, p.name, p.requests, seconds)),
      () => slowClientsPhase(port, seconds),
    ];
    for (const step of steps) {
      const phase = await measure(service, origin, step);
      phases.push(phase);
      if (phase.answeringAfter !== 'yes') break;
    }
    // Probes still in flight belong to the last phase: let them finish.
    await new Promise((done) => setTimeout(done, PROBE_TIMEOUT_MS));
    if (service.proc.exitCode === null) {
      shapeAtEnd = await reportShape(origin);
      peakRssBytes = peakRssOf(service.proc.pid ?? 0);
    }
  } finally {
    await probe?.running.stop();
    await service?.stop();
    await targets.running.stop();
  }

  const samples = probe?.samples ?? [];
  const problems: string[] = [];
  for (const phase of phases) {
    const serverErrors = [...phase.statuses]
      .filter(([status]) => /^5\d\d$/.test(status))
      .reduce((n, [, c]) => n + c, 0);
    if (serverErrors > 0) problems.push(`${phase.name}: ${serverErrors} answers with 5xx`);
    if (phase.revealing > 0) problems.push(`${phase.name}: ${phase.revealing} answers revealed a file or the request`);
    if (phase.answeringAfter !== 'yes')
      problems.push(`${phase.name}: not answering after it (${phase.answeringAfter})`);
  }
  const notes = phases
    .filter((phase) => phase.unexpected.size > 0)
    .map(
      (phase) =>
        `- ${phase.name}: answered otherwise than bench/hostile-requests.ts expects: ${[...phase.unexpected].map(([name, n]) => `${name} ×${integer(n)}`).join('; ')}`,
    );
  process.stdout.write(
    [
      '',
      `Load and abuse: Node ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg()[0]?.toFixed(1)} at the end. ` +
        `The built CLI scraping ${TARGETS} synthetic managers × ${QUEUES_PER_TARGET} queues every ${DEFAULT_SCRAPE_INTERVAL}, evaluating every ${DEFAULT_EVALUATION_INTERVAL} ` +
        `(report at the start: ${shapeAtStart}; at the end: ${shapeAtEnd || 'not read'}). ${seconds} s per phase; load: autocannon, ${CONNECTIONS} connections, ` +
        `Accept-Encoding: gzip; abuse: each request on a new connection, ${CONNECTIONS} at a time; /healthz probed every ${PROBE_EVERY_MS} ms ` +
        `from a separate process, a new connection each (${samples.length.toLocaleString('en-US')} probes).`,
      '',
      '| phase | requests/s | p50 | p99 | statuses seen | /healthz p99 | /healthz max | service RSS (max) | answering after |',
      '|---|---:|---:|---:|---|---:|---:|---:|---|',
      ...phases.map((phase) => row(phase, samples).trim()),
      '',
      `Peak RSS of the service over the run (VmHWM): ${(peakRssBytes / MiB).toFixed(0)} MiB. Slow clients: p50/p99 are how long the service held them before cutting them.`,
      '',
      ...(notes.length > 0 ? notes : ['Every hostile request was answered as bench/hostile-requests.ts expects.']),
      '',
      problems.length === 0
        ? 'Verdict: survived (no crash, no 5xx, nothing revealed, answering after every phase).'
        : 'Verdict: FAILED',
      ...problems.map((p) => `- ${p}`),
      '',
    ].join('\n'),
  );
  return problems.length === 0 ? 0 : 1;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '10' },
    probe: { type: 'string' },
    'serve-targets': { type: 'boolean', default: false },
  },
});
if (values['serve-targets']) {
  await serveTargets();
} else if (values.probe !== undefined) {
  probe(values.probe);
} else {
  const seconds = Number(values.seconds);
  if (!(seconds > 0) || positionals.length > 0) {
    process.stderr.write('usage: tsx bench/load.ts [--seconds N]\n');
    process.exitCode = 2;
  } else {
    process.exitCode = await driver(seconds);
  }
}
