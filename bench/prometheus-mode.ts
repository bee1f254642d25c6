/**
 * Prometheus mode over a large fleet: the queries one evaluation sends to a real Prometheus, their time and
 * the bytes they bring back, for 1,000 and 10,000 queues.
 *
 * The fleet: synthetic controller managers (bench/synthetic-managers.ts) of 100 controllers each, 10 or 100 of
 * them, 40 minutes at one scrape a minute (the longest range a rule reads, the half hour, and Backlog's `for` after
 * it: every reading is evaluated over whole windows, as on a fleet that has run a while), written as one OpenMetrics recording (families in order, each
 * series' samples together) and imported with promtool. The service's Prometheus source reads it through a
 * counting proxy on loopback (requests and response bytes); four evaluations 15 s apart ending at the recording's
 * end, as the service makes them: with its memory, its default `maxSampleDelay` and its default `seriesRefresh`
 * (5 minutes), so the first is cold (every step of every `for`, every series listed) and the later ones ask for
 * the new steps only and keep the series lists (one evaluation in twenty lists them again); the later ones' median.
 * The claim under test: the number of queries per evaluation does not grow with the number of queues.
 *
 * With the recording rules: the Prometheus also holds the series of every recording rule `generate` ships (the
 * default configuration's), backfilled over the recording by `promtool tsdb create-blocks-from rules` at the
 * group's interval (the signals' rules first, then the alerts' parts, which read them), as a Prometheus loading
 * the rules file holds them. The same evaluations are run reading the raw series only (`recordedSeries: off`) and
 * the recorded ones (`auto`, the default). Prometheus's own cost of evaluating the generated rule group once over
 * the same data: every rule of the group (recording and alerting, in order) as an instant query at the evaluation
 * time with `stats=all`, the engine's `evalTotalTime` summed (what `prometheus_rule_group_last_duration_seconds`
 * measures, without the appends of the results; the median of three).
 *
 * Run: `npm run bench:prometheus-mode` (about ten minutes and 4 GB of temporary disk at 10,000 queues).
 * BENCH_PROMETHEUS_QUEUES picks the sizes (default `1000,10000`); BENCH_PROMETHEUS_SLOWEST=N prints each way's N
 * slowest requests of its last evaluation to stderr, BENCH_PROMETHEUS_PROFILE=N the N costliest of them replayed
 * alone, with the totals by kind (for tuning); BENCH_PROMETHEUS_RULES=N the rule group's N costliest rules.
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parse, stringify } from 'yaml';
import {
  DEFAULT_EVALUATION_INTERVAL,
  DEFAULT_PROMETHEUS_MAX_SAMPLE_DELAY,
  DEFAULT_PROMETHEUS_SERIES_REFRESH,
} from '../src/config/service-defaults.js';
import { EvaluationMemory } from '../src/diagnosis/holding.js';
import { ruleAnalyses } from '../src/generate/condition-analysis.js';
import { recordedSignals, recordingPlan } from '../src/generate/recording-rules.js';
import type { RecordedSeriesMode } from '../src/prometheus/recorded-series.js';
import { diagnoseSource } from '../src/service/diagnose-source.js';
import { createPrometheusSource } from '../src/sources/prometheus-source.js';
import { parseDuration } from '../src/util/duration.js';
import {
  backfillRecordingRules,
  formatTimeSec,
  importRecordings,
  removeTempDirs,
  startPrometheus,
} from '../test/support/prometheus.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

const QUEUES_PER_MANAGER = 100;
const SIZES = (process.env.BENCH_PROMETHEUS_QUEUES ?? '1000,10000').split(',').map(Number);
const SCRAPE_S = 60;
const SCRAPES = 41;
const START_S = 1_767_225_600; // 2026-01-01T00:00:00Z
const EVALUATIONS = 4;
const SERVICE_EVALUATION_INTERVAL_MS = parseDuration(DEFAULT_EVALUATION_INTERVAL);
const SERVICE_MAX_SAMPLE_DELAY_MS = parseDuration(DEFAULT_PROMETHEUS_MAX_SAMPLE_DELAY);
const SERVICE_SERIES_REFRESH_MS = parseDuration(DEFAULT_PROMETHEUS_SERIES_REFRESH);
const RUNBOOK = 'https://example.invalid/runbooks';

/**
 * Writes the recording of `managers` managers: for each family (in page order), each manager's series, each
 * series' samples in time order. Families are gathered in one file each, then joined with their TYPE lines.
 */
async function writeRecording(dir: string, managers: number): Promise<string> {
  const families = new Map<string, { type: string; file: string }>();
  for (let m = 0; m < managers; m++) {
    const queues = profiles(m, QUEUES_PER_MANAGER);
    const target = `job="bench-prometheus-mode",instance="manager-${m}:8080"`;
    // family → series → lines, for this manager.
    const gathered = new Map<string, Map<string, string[]>>();
    for (let k = 0; k < SCRAPES; k++) {
      const t = k * SCRAPE_S;
      let family = '';
      for (const line of syntheticPage(queues, t).split('\n')) {
        if (line === '') continue;
        if (line.startsWith('# TYPE ')) {
          const [, , name, type] = line.split(' ');
          family = name as string;
          // OpenMetrics names a counter family without `_total`.
          const key = type === 'counter' ? family.replace(/_total$/, '') : family;
          if (!families.has(family))
            families.set(family, { type: `${key} ${type}`, file: join(dir, `${families.size}.part`) });
          continue;
        }
        if (line.startsWith('#')) continue;
        const brace = line.indexOf('{');
        const space = line.lastIndexOf(' ');
        const series = line.slice(0, space);
        const labelled =
          brace >= 0 && brace < space
            ? `${series.slice(0, brace + 1)}${target},${series.slice(brace + 1)}`
            : `${series}{${target}}`;
        let bySeries = gathered.get(family);
        if (bySeries === undefined) {
          bySeries = new Map();
          gathered.set(family, bySeries);
        }
        let lines = bySeries.get(labelled);
        if (lines === undefined) {
          lines = [];
          bySeries.set(labelled, lines);
        }
        lines.push(`${labelled} ${line.slice(space + 1)} ${START_S + t}`);
      }
    }
    for (const [family, bySeries] of gathered) {
      const file = families.get(family)?.file as string;
      await appendFile(file, `${[...bySeries.values()].flat().join('\n')}\n`);
    }
  }
  const out = join(dir, 'fleet.om');
  const stream = createWriteStream(out);
  for (const { type, file } of families.values()) {
    stream.write(`# TYPE ${type}\n`);
    stream.write(await readFile(file));
    rmSync(file);
  }
  stream.end('# EOF\n');
  await new Promise<void>((done, fail) => {
    stream.on('finish', done);
    stream.on('error', fail);
  });
  return out;
}

/** A request through the proxy: how long its answer took, and its query. */
/** A request through the proxy: its time, its query (or path), and what was sent (to replay it). */
type TimedRequest = {
  readonly ms: number;
  readonly query: string;
  readonly path: string;
  readonly method: string;
  readonly body: string;
  readonly contentType: string | undefined;
};

/** An HTTP proxy to `upstream` counting requests and response bytes, and timing each request. */
async function countingProxy(upstream: string): Promise<{
  url: string;
  take(): { requests: number; bytes: number; timed: TimedRequest[] };
  close(): Promise<void>;
}> {
  const target = new URL(upstream);
  let requests = 0;
  let bytes = 0;
  let timed: TimedRequest[] = [];
  const server = http.createServer((req, res) => {
    requests += 1;
    const started = performance.now();
    const body: Buffer[] = [];
    req.on('data', (chunk: Buffer) => body.push(chunk));
    const forward = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        answer.on('end', () => {
          const sent = Buffer.concat(body).toString();
          const query = new URLSearchParams(`${req.url?.split('?')[1] ?? ''}&${sent}`);
          timed.push({
            ms: performance.now() - started,
            query: query.get('query') ?? req.url ?? '',
            path: req.url ?? '/',
            method: req.method ?? 'GET',
            body: sent,
            contentType: req.headers['content-type'],
          });
        });
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take() {
      const counted = { requests, bytes, timed };
      requests = 0;
      bytes = 0;
      timed = [];
      return counted;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** The evaluations of one way of reading: the first (cold) one and the median of the later ones. */
type Evaluations = {
  firstMs: number;
  first: { requests: number; bytes: number };
  laterMs: number;
  later: { requests: number; bytes: number };
  found: number;
};

type Row = {
  queues: number;
  series: number;
  recordingMiB: number;
  /** The raw series' evaluations, or why they failed (a range query past the client's timeout at 10,000 queues). */
  raw: Evaluations | { readonly error: string };
  recorded: Evaluations;
  /** Prometheus's engine time for one evaluation of the generated rule group (median of three). */
  ruleGroupMs: number;
  backfillS: number;
};

const SHIPPED_PLAN = recordingPlan(ruleAnalyses());
const SHIPPED_RECORDINGS = recordedSignals(SHIPPED_PLAN);
const GROUP_INTERVAL = '30s';

type RuleYaml = { record?: string; alert?: string; expr: string };

/** The committed rules file's group: what a Prometheus loading it evaluates. */
function generatedGroup(): RuleYaml[] {
  const file = parse(readFileSync(new URL('../alerts/workqueue-doctor.rules.yaml', import.meta.url), 'utf8')) as {
    groups: Array<{ rules: RuleYaml[] }>;
  };
  return file.groups.flatMap((g) => g.rules);
}

/** The recording rules in two files: the signals', then those that read recorded series (the alerts' parts). */
function recordingPasses(rules: readonly RuleYaml[]): string[] {
  const signalSeries = new Set([...SHIPPED_RECORDINGS.values()].map((r) => r.series));
  const records = rules.filter((r) => r.record !== undefined);
  const file = (selected: RuleYaml[]) =>
    stringify({ groups: [{ name: 'workqueue-doctor', interval: GROUP_INTERVAL, rules: selected }] });
  return [
    file(records.filter((r) => signalSeries.has(r.record as string))),
    file(records.filter((r) => !signalSeries.has(r.record as string))),
  ];
}

/** Prometheus's engine time (ms) for every rule of `rules` as an instant query at `atSec`, summed. */
async function ruleGroupEvaluationMs(url: string, rules: readonly RuleYaml[], atSec: number): Promise<number> {
  let seconds = 0;
  const costs: Array<{ name: string; seconds: number }> = [];
  for (const rule of rules) {
    const params = new URLSearchParams({ query: rule.expr, time: formatTimeSec(atSec), stats: 'all' });
    const answer = (await (await fetch(`${url}/api/v1/query?${params.toString()}`)).json()) as {
      status: string;
      data?: { stats?: { timings?: { evalTotalTime?: number } } };
      error?: string;
    };
    const evalSeconds = answer.data?.stats?.timings?.evalTotalTime;
    if (answer.status !== 'success' || evalSeconds === undefined) {
      throw new Error(`rule ${rule.record ?? rule.alert}: ${answer.error ?? 'no timings in the answer'}`);
    }
    seconds += evalSeconds;
    costs.push({ name: rule.record ?? rule.alert ?? '', seconds: evalSeconds });
  }
  printCostliestRules(costs);
  return seconds * 1000;
}

/** BENCH_PROMETHEUS_RULES=N prints the N costliest rules of a rule group evaluation (engine time), for tuning. */
function printCostliestRules(costs: ReadonlyArray<{ name: string; seconds: number }>): void {
  const count = Number(process.env.BENCH_PROMETHEUS_RULES ?? 0);
  if (!(count > 0)) return;
  console.error('costliest rules of the group:');
  for (const c of [...costs].sort((a, b) => b.seconds - a.seconds).slice(0, count)) {
    console.error(`  ${(c.seconds * 1000).toFixed(0)} ms  ${c.name}`);
  }
}

/** BENCH_PROMETHEUS_SLOWEST=N prints the N slowest requests of an evaluation (time and query), for tuning. */
function printSlowest(mode: RecordedSeriesMode, timed: readonly TimedRequest[]): void {
  const count = Number(process.env.BENCH_PROMETHEUS_SLOWEST ?? 0);
  if (!(count > 0)) return;
  console.error(`slowest requests, recorded series ${mode}:`);
  for (const r of [...timed].sort((a, b) => b.ms - a.ms).slice(0, count)) {
    console.error(`  ${r.ms.toFixed(0)} ms  ${r.query.slice(0, 240)}`);
  }
}

/**
 * BENCH_PROMETHEUS_PROFILE=N replays the requests of an evaluation one at a time, each alone on the server, and
 * prints the N costliest: a query's engine time (`stats=all`), a series lookup's time; then the totals by kind
 * (recorded series read, raw series read, condition, series lookup). Requests sent together share the cores, so
 * their own times do not tell which one costs the server most; alone they do.
 */
async function printProfile(upstream: string, mode: RecordedSeriesMode, timed: readonly TimedRequest[]): Promise<void> {
  const count = Number(process.env.BENCH_PROMETHEUS_PROFILE ?? 0);
  if (!(count > 0)) return;
  const costs: Array<{ ms: number; kind: string; query: string }> = [];
  for (const r of timed) {
    const isQuery = r.path.startsWith('/api/v1/query');
    const withStats = isQuery ? `${r.body}${r.body === '' ? '' : '&'}stats=all` : r.body;
    const started = performance.now();
    const answer = await fetch(`${upstream}${r.path}`, {
      method: r.method,
      ...(r.method === 'POST' ? { body: withStats } : {}),
      headers: r.contentType === undefined ? {} : { 'content-type': r.contentType },
    });
    const json = (await answer.json()) as { data?: { stats?: { timings?: { evalTotalTime?: number } } } };
    const wallMs = performance.now() - started;
    const engineS = json.data?.stats?.timings?.evalTotalTime;
    const recordedRead = /^\(?[a-z]+:[a-z0-9_]+:[a-z0-9_]+ \* 1\)?$/.test(r.query.trim());
    const kind = !isQuery
      ? 'series lookup'
      : recordedRead
        ? 'recorded series read'
        : /(>=|<=| > | < |\band\b|\bunless\b| or )/.test(r.query) && /[a-z]+:[a-z0-9_]+:[a-z0-9_]+/.test(r.query)
          ? 'condition'
          : 'raw series read';
    costs.push({ ms: engineS === undefined ? wallMs : engineS * 1000, kind, query: r.query });
  }
  console.error(`costliest requests alone, recorded series ${mode}:`);
  for (const c of [...costs].sort((a, b) => b.ms - a.ms).slice(0, count)) {
    console.error(`  ${c.ms.toFixed(0)} ms  ${c.kind}  ${c.query.slice(0, 200)}`);
  }
  const byKind = new Map<string, { n: number; ms: number }>();
  for (const c of costs) {
    const k = byKind.get(c.kind) ?? { n: 0, ms: 0 };
    byKind.set(c.kind, { n: k.n + 1, ms: k.ms + c.ms });
  }
  for (const [kind, k] of byKind) console.error(`  total ${kind}: ${k.n} requests, ${k.ms.toFixed(0)} ms`);
}

/** `EVALUATIONS` evaluations through `proxy`, reading recorded series as `mode` says. */
async function evaluations(
  proxy: Awaited<ReturnType<typeof countingProxy>>,
  upstream: string,
  mode: RecordedSeriesMode,
  atMs: number,
): Promise<Evaluations> {
  const source = createPrometheusSource(
    { url: proxy.url, timeoutMs: 120_000 },
    {
      recorded: { mode, signals: SHIPPED_RECORDINGS },
      maxSampleDelayMs: SERVICE_MAX_SAMPLE_DELAY_MS,
      seriesRefreshMs: SERVICE_SERIES_REFRESH_MS,
    },
  );
  try {
    const memory = new EvaluationMemory();
    proxy.take();
    const runs: Array<{ ms: number; requests: number; bytes: number; found: number }> = [];
    for (let i = 0; i < EVALUATIONS; i++) {
      const start = performance.now();
      // 15 s apart, as the service evaluates, the last at `atMs`.
      const at = atMs - (EVALUATIONS - 1 - i) * SERVICE_EVALUATION_INTERVAL_MS;
      const report = await diagnoseSource(source, { atMs: at, runbookBaseUrl: RUNBOOK, memory });
      const ms = performance.now() - start;
      const { requests, bytes, timed } = proxy.take();
      runs.push({ requests, bytes, ms, found: report.queues.length });
      if (i === EVALUATIONS - 1) {
        printSlowest(mode, timed);
        await printProfile(upstream, mode, timed);
      }
    }
    const [first, ...later] = runs as [(typeof runs)[0], ...typeof runs];
    const median = later.sort((a, b) => a.ms - b.ms)[Math.floor(later.length / 2)] ?? first;
    return {
      firstMs: first.ms,
      first: { requests: first.requests, bytes: first.bytes },
      laterMs: median.ms,
      later: { requests: median.requests, bytes: median.bytes },
      found: first.found,
    };
  } finally {
    await source.close();
  }
}

async function measure(queues: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'wqd-bench-prom-mode-'));
  try {
    const file = await writeRecording(dir, queues / QUEUES_PER_MANAGER);
    // Its size from the file system: at 10,000 queues it is larger than a buffer can hold (2 GiB).
    const recordingMiB = (await stat(file)).size / 2 ** 20;
    const storage = await importRecordings([file]);
    rmSync(file);
    const group = generatedGroup();
    const endSec = START_S + (SCRAPES - 1) * SCRAPE_S;
    const backfillStart = performance.now();
    await backfillRecordingRules(storage, recordingPasses(group), START_S, endSec);
    const backfillS = (performance.now() - backfillStart) / 1000;
    const prom = await startPrometheus({ storagePath: storage, readyTimeoutMs: 120_000 });
    const proxy = await countingProxy(prom.url);
    try {
      const series = Number((await prom.query('count({job="bench-prometheus-mode"})', endSec))[0]?.value);
      const atMs = endSec * 1000;
      const raw = await evaluations(proxy, prom.url, 'off', atMs).catch((error: Error) => ({
        error: error.message.split('\n')[0] ?? String(error),
      }));
      const recorded = await evaluations(proxy, prom.url, 'auto', atMs);
      const groupRuns: number[] = [];
      for (let i = 0; i < 3; i++) groupRuns.push(await ruleGroupEvaluationMs(prom.url, group, endSec));
      const ruleGroupMs = groupRuns.sort((a, b) => a - b)[1] as number;
      return { queues, series, recordingMiB, raw, recorded, ruleGroupMs, backfillS };
    } finally {
      await proxy.close();
      await prom.stop();
      removeTempDirs();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const size of SIZES) {
    rows.push(await measure(size));
    // Each size as it is measured (stderr): a later size that fails loses nothing measured before it.
    process.stderr.write(`measured ${size} queues: ${JSON.stringify(rows.at(-1))}\n`);
  }
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const cell = (e: Evaluations, which: 'first' | 'later') =>
    `${e[which].requests}, ${seconds(which === 'first' ? e.firstMs : e.laterMs)}, ${mib(e[which].bytes)}`;
  console.log(
    '| queues | series in Prometheus | recording | reading | queues reported | first evaluation: queries, time, bytes | later evaluations: queries, time, bytes |',
  );
  console.log('|---:|---:|---:|---|---:|---|---|');
  for (const r of rows) {
    for (const [reading, e] of [
      ['raw series', r.raw],
      ['recorded series', r.recorded],
    ] as const) {
      const cells =
        'error' in e
          ? `– | failed: ${e.error.slice(0, 200)} | – |`
          : `${e.found} | ${cell(e, 'first')} | ${cell(e, 'later')} |`;
      console.log(`| ${r.queues} | ${r.series} | ${r.recordingMiB.toFixed(0)} MiB | ${reading} | ${cells}`);
    }
  }
  console.log(
    '\n| queues | evaluation, raw ÷ recorded | bytes, raw ÷ recorded | Prometheus evaluating the generated rule group (engine time) | evaluation reading recorded series ÷ the rule group | backfill |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const raw = 'error' in r.raw ? undefined : r.raw;
    const ratio = (of: (e: Evaluations) => number) => (raw === undefined ? '–' : (of(raw) / of(r.recorded)).toFixed(1));
    console.log(
      `| ${r.queues} | ${ratio((e) => e.laterMs)} | ${ratio((e) => e.later.bytes)} | ${seconds(r.ruleGroupMs)} | ${(r.recorded.laterMs / r.ruleGroupMs).toFixed(2)} | ${r.backfillS.toFixed(0)} s |`,
    );
  }
  const counts = new Set(rows.flatMap((r) => ('error' in r.raw ? [] : [r.raw.later.requests])));
  console.log(
    `\nQueries per evaluation (raw series) constant in the number of queues: ${counts.size === 0 ? 'not measured' : counts.size === 1 ? 'met' : 'missed'} (${[...counts].join(', ')})`,
  );
  for (const r of rows.filter((x) => x.queues === 10_000)) {
    console.log(
      `10,000 queues reading recorded series within the 15 s interval: ${r.recorded.laterMs <= 15_000 ? 'met' : 'missed'} (${seconds(r.recorded.laterMs)}); no more than Prometheus's own evaluation of the rule group: ${r.recorded.laterMs <= r.ruleGroupMs ? 'met' : 'missed'} (${seconds(r.ruleGroupMs)})`,
    );
  }
  writeFileSync(join(tmpdir(), 'wqd-bench-prometheus-mode.json'), JSON.stringify(rows));
}

await main();
