/**
 * Cost of one evaluation of the in-process engine over a fleet, and of the same expressions in a real
 * Prometheus over the same data.
 *
 * The fleet: N processes of one queue each (10, 100, 1,000), 30 minutes at 15 s, taken from ten simulator
 * scenarios (healthy, busy, backlog, hot loop, failures, blocking call, ...; the controller-runtime flavor)
 * with the process's `instance` renamed, so every queue has its own controller-runtime and REST-client
 * series. In-process (one child process per size, so sizes do not share heap or JIT state): the history as
 * the standalone service holds it (the diagnostic families), one `diagnose` at the last sample repeated,
 * median time per evaluation and per queue, heap and RSS after a GC. Prometheus (10 and 100 queues; 1,000
 * would import gigabytes): the same recordings imported with promtool, every expression the engine
 * evaluates (each reported signal and each rule's condition, rendered as PromQL) queried at the same time,
 * the sum of their median times as Prometheus's cost of one evaluation; the ratio in-process / Prometheus.
 *
 * Run: `npm run bench:evaluation` (node --expose-gc).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RULES } from '../src/diagnosis/catalog.js';
import { diagnose } from '../src/diagnosis/engine.js';
import { conditionWith, defaultThresholds } from '../src/diagnosis/rule.js';
import { REPORTED_SIGNALS } from '../src/diagnosis/signals.js';
import { keepFamilies } from '../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../src/metrics/names.js';
import { createStoreBackend, historyStore } from '../src/promql/history-backend.js';
import { renderPromQL } from '../src/promql/render.js';
import { runVirtual } from '../src/simulate/index.js';
import { History } from '../src/store/history.js';
import { loadRecording } from '../src/store/recording.js';
import { importRecordings, removeTempDirs, startPrometheus } from '../test/support/prometheus.js';

const SIZES = [10, 100, 1_000];
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
const EVALUATIONS = Number(process.env.BENCH_EVALUATIONS ?? 7);
const QUERY_REPEATS = 5;
const RUNBOOK = 'https://example.invalid/runbooks';

type Row = {
  queues: number;
  series: number;
  samples: number;
  evaluationMs: number;
  heapMiB: number;
  rssMiB: number;
  prometheusMs?: number;
  expressions?: number;
};

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const mib = (bytes: number): number => bytes / 2 ** 20;

/** The base recordings the fleet is made of, and the time of their last scrape (the same for all). */
async function bases(): Promise<{ texts: string[]; endMs: number }> {
  const runs = await Promise.all(SCENARIOS.map(async (scenario) => runVirtual(scenario, { seed: 1 })));
  const texts = runs.map((run) => run.recording.text());
  const endMs = loadRecording(texts[0] as string, 'base').endMs;
  if (endMs === undefined) throw new Error('empty recording');
  return { texts, endMs };
}

/** Process `i` of the fleet: a base recording with `instance` renamed, so every process is its own target. */
function processText(texts: readonly string[], i: number): string {
  return (texts[i % texts.length] as string).replace(/instance="[^"]*"/g, `instance="p${i}:8080"`);
}

async function measureInProcess(size: number): Promise<Row> {
  const { texts, endMs } = await bases();
  const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
  const history = new History();
  for (let i = 0; i < size; i++) loadRecording(processText(texts, i), `p${i}`, { history, keep });
  texts.length = 0;
  const backend = createStoreBackend(historyStore(history));
  const times: number[] = [];
  for (let i = 0; i < EVALUATIONS; i++) {
    const start = performance.now();
    const report = await diagnose(backend, { atMs: endMs, runbookBaseUrl: RUNBOOK });
    times.push(performance.now() - start);
    if (report.queues.length < size) throw new Error(`expected ${size} queues, got ${report.queues.length}`);
  }
  (globalThis as { gc?: () => void }).gc?.();
  const memory = process.memoryUsage();
  const stats = history.stats();
  return {
    queues: size,
    series: stats.series,
    samples: stats.samples,
    evaluationMs: median(times.slice(1)),
    heapMiB: mib(memory.heapUsed),
    rssMiB: mib(memory.rss),
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
  const { texts, endMs } = await bases();
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
        await prom.query(expr, endMs / 1000);
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
    '| queues | series | samples | one evaluation | per queue | heap | RSS | Prometheus, same expressions | in-process ÷ Prometheus |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const prom = r.prometheusMs === undefined ? 'n/a' : `${r.prometheusMs.toFixed(0)} ms (${r.expressions} queries)`;
    const ratio = r.prometheusMs === undefined ? 'n/a' : (r.evaluationMs / r.prometheusMs).toFixed(2);
    console.log(
      `| ${r.queues} | ${r.series} | ${r.samples} | ${r.evaluationMs.toFixed(0)} ms | ${(r.evaluationMs / r.queues).toFixed(2)} ms | ${r.heapMiB.toFixed(0)} MiB | ${r.rssMiB.toFixed(0)} MiB | ${prom} | ${ratio} |`,
    );
  }
  const thousand = rows.find((r) => r.queues === 1_000);
  if (thousand !== undefined) {
    const perQueue = thousand.evaluationMs / thousand.queues;
    const coreShare = thousand.evaluationMs / 15_000;
    console.log(
      `\nGoals: ≤ 0.5 ms per queue: ${perQueue <= 0.5 ? 'met' : 'missed'} (${perQueue.toFixed(2)} ms); 1,000 queues evaluated every 15 s within 10% of a core: ${coreShare <= 0.1 ? 'met' : 'missed'} (${(coreShare * 100).toFixed(1)}%, evaluation only); RSS ≤ 300 MiB: ${thousand.rssMiB <= 300 ? 'met' : 'missed'} (${thousand.rssMiB.toFixed(0)} MiB)`,
    );
  }
}

await main();
