/**
 * Cost of the in-process engine's evaluations over a fleet, and of the same expressions in a real Prometheus
 * over the same data.
 *
 * The fleet: N processes of one queue each (10, 100, 1,000), taken from ten simulator scenarios (healthy,
 * busy, backlog, hot loop, failures, blocking call, ...; the controller-runtime flavor) with the process's
 * `instance` renamed, so every queue has its own controller-runtime and REST-client series.
 *
 * In-process (one child process per size, so sizes do not share heap or JIT state, each limiting its heap's growth
 * between full collections as `serve` does, src/service/heap-growth.ts), shaped as the standalone service runs: a history with the service's retention (30 minutes) and diagnostic families, filled with the
 * first 30 minutes; a first evaluation (cold: every step of every `for`, and each finding's `since` traced
 * back); then one scrape round (every series' next 15 s of samples) and one evaluation with the service's
 * memory, every 15 s of data for 5 minutes (at multiples of 15 s, as the service times them): the steady state, as the median per evaluation and per queue,
 * with the rounds' appends timed apart. Heap and RSS after a GC at the end; the peak RSS sampled every 10 ms from the filled history on; the history's bytes per sample (packed, stale markers included). The longest the event loop was held
 * during the first and the steady evaluations (the longest gap between turns of a `setImmediate` chain running
 * beside them: what a request arriving meanwhile could wait), as the evaluation yields between expressions.
 *
 * Prometheus (10 and 100 queues; 1,000 would import gigabytes): the same recordings imported with promtool,
 * every expression one evaluation of the engine computes (each reported signal and each rule's condition,
 * rendered as PromQL, as the generated recording and alerting rules hold them) queried at the same time, the
 * sum of their median times as Prometheus's cost of one evaluation; the ratio in-process (steady) / Prometheus.
 *
 * Run: `npm run bench:evaluation` (node --expose-gc). BENCH_EVALUATIONS sets the steady evaluations (default 20);
 * BENCH_EVALUATION_QUEUES the sizes, comma-separated (default `10,100,1000`; Prometheus is measured at those of
 * 10 and 100 among them); BENCH_EVALUATION_HEAP_SNAPSHOT a directory where each child writes a heap snapshot
 * (`evaluation-<queues>.heapsnapshot`) after the steady evaluations and the GC, for attributing what stays live
 * (the snapshot is written after the figures are taken and does not change them). NODE_OPTIONS (a heap limit)
 * reaches the children.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';
import { RULES } from '../src/diagnosis/catalog.js';
import { diagnose } from '../src/diagnosis/engine.js';
import { EvaluationMemory } from '../src/diagnosis/holding.js';
import { conditionWith, defaultThresholds } from '../src/diagnosis/rule.js';
import { REPORTED_SIGNALS } from '../src/diagnosis/signals.js';
import { keepFamilies } from '../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES, LABEL } from '../src/metrics/names.js';
import { createStoreBackend, historyStore } from '../src/promql/history-backend.js';
import { renderPromQL } from '../src/promql/render.js';
import { limitHeapGrowth } from '../src/service/heap-growth.js';
import { runVirtual } from '../src/simulate/index.js';
import { History, type SeriesView } from '../src/store/history.js';
import { loadRecording } from '../src/store/recording.js';
import { importRecordings, removeTempDirs, startPrometheus } from '../test/support/prometheus.js';

const SIZES = (process.env.BENCH_EVALUATION_QUEUES ?? '10,100,1000').split(',').map(Number);
const HEAP_SNAPSHOT_DIR = process.env.BENCH_EVALUATION_HEAP_SNAPSHOT;
const PROMETHEUS_SIZES = new Set([10, 100]);
const SCENARIOS = [
  'healthy',
  'busy-but-fine',
  'backlog',
  'hot-loop-status-write',
  'persistent-failure',
  'blocking-call',
  'requeue-after',
  'transient-errors',
  'saturation',
  'slow-but-steady',
];
const MINUTE_MS = 60_000;
const SCRAPE_MS = 15_000;
const WARM_MS = 30 * MINUTE_MS;
const EVALUATIONS = Number(process.env.BENCH_EVALUATIONS ?? 20);
const RECORDING_MS = WARM_MS + (EVALUATIONS + 2) * SCRAPE_MS;
const QUERY_REPEATS = 5;
const RUNBOOK = 'https://example.invalid/runbooks';
const GOALS = { msPerQueue: 0.5, coreShare: 0.1, rssMiB: 300 } as const;

type Row = {
  queues: number;
  series: number;
  samples: number;
  coldMs: number;
  evaluationMs: number;
  appendMs: number;
  /** Longest event-loop delay during the first evaluation, and during the steady ones. */
  coldBlockMs: number;
  steadyBlockMs: number;
  heapMiB: number;
  rssMiB: number;
  /** The history's packed samples (and stale markers), per sample. */
  bytesPerSample: number;
  /** Highest RSS seen (sampled every 10 ms) from the history filled to the end. */
  peakRssMiB: number;
  prometheusMs?: number;
  expressions?: number;
};

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const mib = (bytes: number): number => bytes / 2 ** 20;

/** The base recordings the fleet is made of, and the time of their first sample (the same for all). */
async function bases(): Promise<{ texts: string[]; startMs: number }> {
  const runs = await Promise.all(
    SCENARIOS.map(async (scenario) => runVirtual(scenario, { seed: 1, durationMs: RECORDING_MS })),
  );
  const texts = runs.map((run) => run.recording.text());
  const startMs = loadRecording(texts[0] as string, 'base').startMs;
  if (startMs === undefined) throw new Error('empty recording');
  return { texts, startMs };
}

/** Process `i` of the fleet: a base recording with `instance` renamed, so every process is its own target. */
function processText(texts: readonly string[], i: number): string {
  return (texts[i % texts.length] as string).replace(/instance="[^"]*"/g, `instance="p${i}:8080"`);
}

/** A base recording's series, with the diagnostic families only. */
function baseSeries(text: string): SeriesView[] {
  const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
  const history = new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: Number.POSITIVE_INFINITY });
  loadRecording(text, 'base', { history, keep });
  return history.metricNames().flatMap((metric) => history.select({ metric }));
}

/** `work`'s result and the longest the event loop went without a turn while it ran. */
async function longestHold<T>(work: () => Promise<T>): Promise<{ result: T; longestMs: number }> {
  let last = performance.now();
  let longestMs = 0;
  let running = true;
  const turn = (): void => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { result: await work(), longestMs };
  } finally {
    running = false;
  }
}

async function measureInProcess(size: number): Promise<Row> {
  const { texts, startMs } = await bases();
  const series = texts.map(baseSeries);
  texts.length = 0;
  const history = new History();
  // Each process: its target and its instance. A series' labels are made for each append, as a scraped page's are
  // (parsed, appended, dropped), so the fleet holds no label set per series beside the history's own.
  const fleet = Array.from({ length: size }, (_, i) => ({
    target: { id: `p${i}` },
    instance: `p${i}:8080`,
    series: series[i % series.length] ?? [],
  }));
  /** Appends every series' samples in `(fromMs, toMs]`: one scrape round of the fleet. */
  const round = (fromMs: number, toMs: number): void => {
    for (const process of fleet) {
      for (const view of process.series) {
        let first = 0;
        while (first < view.t.length && (view.t[first] as number) <= fromMs) first++;
        let end = first;
        while (end < view.t.length && (view.t[end] as number) <= toMs) end++;
        if (end > first)
          history.appendSamples(
            process.target,
            view.name,
            { ...view.labels, [LABEL.instance]: process.instance },
            view.t.subarray(first, end),
            view.v.subarray(first, end),
          );
      }
    }
  };
  const backend = createStoreBackend(historyStore(history));
  const memory = new EvaluationMemory();
  let peakRss = 0;
  const rssSampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 10);
  // At multiples of 15 s, as the service times its evaluations.
  let at = Math.ceil((startMs + WARM_MS) / SCRAPE_MS) * SCRAPE_MS;
  round(Number.NEGATIVE_INFINITY, at);
  const coldStart = performance.now();
  // Only the first report's size is kept, as the steady reports are dropped (a service keeps its latest, a few MiB at
  // 1,000 queues): the heap measured is the history's and the evaluation memory's.
  const { result: firstQueues, longestMs: coldBlockMs } = await longestHold(
    async () => (await diagnose(backend, { atMs: at, runbookBaseUrl: RUNBOOK, memory })).queues.length,
  );
  const coldMs = performance.now() - coldStart;
  if (firstQueues < size) throw new Error(`expected ${size} queues, got ${firstQueues}`);
  const times: number[] = [];
  const appends: number[] = [];
  let steadyBlockMs = 0;
  for (let i = 0; i < EVALUATIONS; i++) {
    const appendStart = performance.now();
    round(at, at + SCRAPE_MS);
    appends.push(performance.now() - appendStart);
    at += SCRAPE_MS;
    const start = performance.now();
    const { longestMs } = await longestHold(() => diagnose(backend, { atMs: at, runbookBaseUrl: RUNBOOK, memory }));
    times.push(performance.now() - start);
    steadyBlockMs = Math.max(steadyBlockMs, longestMs);
  }
  clearInterval(rssSampler);
  (globalThis as { gc?: () => void }).gc?.();
  const memoryUsage = process.memoryUsage();
  peakRss = Math.max(peakRss, memoryUsage.rss);
  const stats = history.stats();
  if (HEAP_SNAPSHOT_DIR !== undefined) writeHeapSnapshot(join(HEAP_SNAPSHOT_DIR, `evaluation-${size}.heapsnapshot`));
  return {
    queues: size,
    series: stats.series,
    samples: stats.samples,
    coldMs,
    evaluationMs: median(times),
    appendMs: median(appends),
    coldBlockMs,
    steadyBlockMs,
    heapMiB: mib(memoryUsage.heapUsed),
    rssMiB: mib(memoryUsage.rss),
    bytesPerSample: stats.bytes / stats.samples,
    peakRssMiB: mib(peakRss),
  };
}

/** Every expression one in-process evaluation computes at its evaluation time, as PromQL. */
function engineExpressions(): string[] {
  return [
    ...REPORTED_SIGNALS.map((s) => renderPromQL(s.expr)),
    ...RULES.map((rule) => renderPromQL(conditionWith(rule, defaultThresholds(rule)))),
  ];
}

async function measurePrometheus(size: number, dir: string): Promise<{ ms: number; expressions: number }> {
  const { texts, startMs } = await bases();
  const files = Array.from({ length: size }, (_, i) => {
    const file = join(dir, `p${i}.om`);
    writeFileSync(file, processText(texts, i));
    return file;
  });
  const storage = await importRecordings(files);
  const prom = await startPrometheus({ storagePath: storage });
  try {
    const expressions = engineExpressions();
    let total = 0;
    for (const expr of expressions) {
      const times: number[] = [];
      for (let i = 0; i < QUERY_REPEATS; i++) {
        const start = performance.now();
        await prom.query(expr, (startMs + WARM_MS) / 1000);
        times.push(performance.now() - start);
      }
      total += median(times);
    }
    return { ms: total, expressions: expressions.length };
  } finally {
    await prom.stop();
    removeTempDirs();
  }
}

function runChild(args: readonly string[]): Promise<Row> {
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1]!, [...args], { stdio: 'pipe', execArgv: [...process.execArgv, '--expose-gc'] });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr?.pipe(process.stderr);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`child ${args.join(' ')} exited ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as Row);
    });
  });
}

async function main(): Promise<void> {
  const rowArg = process.argv.indexOf('--in-process');
  if (rowArg >= 0) {
    limitHeapGrowth();
    console.log(JSON.stringify(await measureInProcess(Number(process.argv[rowArg + 1]))));
    return;
  }
  const rows: Row[] = [];
  for (const size of SIZES) rows.push(await runChild(['--in-process', String(size)]));
  for (const row of rows) {
    if (!PROMETHEUS_SIZES.has(row.queues)) continue;
    const dir = mkdtempSync(join(tmpdir(), 'wqd-bench-eval-'));
    try {
      const prometheus = await measurePrometheus(row.queues, dir);
      row.prometheusMs = prometheus.ms;
      row.expressions = prometheus.expressions;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(
    '| queues | series | samples | history, bytes per sample | first evaluation | steady evaluation | per queue | scrape round (appends) | event loop held, first / steady (max) | heap | RSS (peak) | Prometheus, same expressions | steady ÷ Prometheus |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const prom = r.prometheusMs === undefined ? 'n/a' : `${r.prometheusMs.toFixed(0)} ms (${r.expressions} queries)`;
    const ratio = r.prometheusMs === undefined ? 'n/a' : (r.evaluationMs / r.prometheusMs).toFixed(2);
    console.log(
      `| ${r.queues} | ${r.series} | ${r.samples} | ${r.bytesPerSample.toFixed(1)} | ${r.coldMs.toFixed(0)} ms | ${r.evaluationMs.toFixed(0)} ms | ${(r.evaluationMs / r.queues).toFixed(2)} ms | ${r.appendMs.toFixed(0)} ms | ${r.coldBlockMs.toFixed(0)} / ${r.steadyBlockMs.toFixed(0)} ms | ${r.heapMiB.toFixed(0)} MiB | ${r.rssMiB.toFixed(0)} MiB (${r.peakRssMiB.toFixed(0)} MiB) | ${prom} | ${ratio} |`,
    );
  }
  const verdict = (met: boolean): string => (met ? 'met' : 'missed');
  const thousand = rows.find((r) => r.queues === 1_000);
  if (thousand !== undefined) {
    const perQueue = thousand.evaluationMs / thousand.queues;
    const coreShare = (thousand.evaluationMs + thousand.appendMs) / SCRAPE_MS;
    console.log(
      `\nGoals (1,000 queues, steady state): ≤ ${GOALS.msPerQueue} ms per queue per evaluation: ${verdict(perQueue <= GOALS.msPerQueue)} (${perQueue.toFixed(2)} ms); evaluations and scrape-round appends every 15 s within ${GOALS.coreShare * 100}% of a core: ${verdict(coreShare <= GOALS.coreShare)} (${(coreShare * 100).toFixed(1)}%; parsing the pages is in bench:parser); peak RSS ≤ ${GOALS.rssMiB} MiB: ${verdict(thousand.peakRssMiB <= GOALS.rssMiB)} (${thousand.peakRssMiB.toFixed(0)} MiB; ${thousand.rssMiB.toFixed(0)} MiB at the end)`,
    );
  }
  for (const r of rows) {
    if (r.prometheusMs === undefined) continue;
    console.log(
      `No slower than Prometheus at ${r.queues} queues: ${verdict(r.evaluationMs <= r.prometheusMs)} (${(r.evaluationMs / r.prometheusMs).toFixed(2)}×)`,
    );
  }
}

await main();
