/**
 * Throughput of the reference work queue: add → get → done cycles per second on the real clock.
 *
 * Scenarios:
 * - shallow: 1,000 keys added one at a time and taken at once (depth 0 or 1), with `tryGet` and
 *   with the promise-returning `get`;
 * - batch: 1,000 keys added, then 1,000 taken and done: the loop of controller-runtime's
 *   `BenchmarkAddGetDone` (pkg/controller/priorityqueue/priorityqueue_test.go), whose figure is
 *   printed as the anchor for the priority queue;
 * - backlog: 100,000 distinct keys added (fill), then all taken and done (drain); the rate counts
 *   both phases. Drained by one worker (each item done before the next is taken), and by eight
 *   (eight taken, then their eight `done`s), which defeats the queue's one-entry hand-out cache so
 *   every `done` pays a Map lookup. Rounds refill the same keys (a resync: the queue finds the
 *   entries it kept for them), or 100,000 keys never seen before (every entry is new).
 * Each with the no-op provider (unnamed queue: no metrics work) and with the prom-client provider
 * (named queue, controller-runtime flavor), on the plain and the rate-limiting queue, and on
 * controller-runtime's priority queue (default limiter, every item at priority 0). Best of several
 * rounds after a warm-up; prints a markdown table. Run: `npx tsx bench/queue.ts`.
 */
import { fork } from 'node:child_process';
import { Registry } from 'prom-client';
import {
  createPriorityQueue,
  createPrometheusMetricsProvider,
  createQueue,
  createRateLimitingQueue,
  defaultControllerRateLimiter,
  type Queue,
} from '../src/queue/index.js';

const SHALLOW_KEYS = 1_000;
const BACKLOG_KEYS = 100_000;
const ROUNDS = 5;
const WORKERS = 8;

type ProviderName = 'no-op' | 'prom-client';
type QueueKind = 'queue' | 'rate-limiting' | 'priority';

function makeQueue(kind: QueueKind, provider: ProviderName): Queue<string> {
  const options =
    provider === 'no-op'
      ? {}
      : { name: 'bench', metricsProvider: createPrometheusMetricsProvider({ registry: new Registry() }) };
  if (kind === 'queue') return createQueue<string>(options);
  if (kind === 'priority') return createPriorityQueue<string>(options);
  return createRateLimitingQueue<string>(defaultControllerRateLimiter<string>(), options);
}

function keys(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `namespace-${i % 97}/object-${i}`);
}

const shallowKeys = keys(SHALLOW_KEYS);
const backlogKeys = keys(BACKLOG_KEYS);
let freshRound = 0;

/** A new set of backlog keys, created only when a row needs it. */
function freshKeys(): string[] {
  freshRound++;
  return Array.from({ length: BACKLOG_KEYS }, (_, i) => `round-${freshRound}/object-${i}`);
}

/** Returns cycles per second. */
function shallowTryGet(queue: Queue<string>, cycles: number): number {
  const start = performance.now();
  for (let i = 0; i < cycles; i++) {
    queue.add(shallowKeys[i % SHALLOW_KEYS]!);
    const got = queue.tryGet()!;
    queue.done(got.item);
  }
  return cycles / ((performance.now() - start) / 1000);
}

async function shallowGet(queue: Queue<string>, cycles: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < cycles; i++) {
    queue.add(shallowKeys[i % SHALLOW_KEYS]!);
    const got = await queue.get();
    if (got.shutdown) throw new Error('queue shut down during the benchmark');
    queue.done(got.item);
  }
  return cycles / ((performance.now() - start) / 1000);
}

/** BenchmarkAddGetDone's loop body, `cycles / 1,000` times: add 1,000 keys, then get and done 1,000. */
function batch(queue: Queue<string>, cycles: number): number {
  const loops = Math.max(1, Math.floor(cycles / SHALLOW_KEYS));
  const start = performance.now();
  for (let loop = 0; loop < loops; loop++) {
    for (const key of shallowKeys) queue.add(key);
    for (let i = 0; i < SHALLOW_KEYS; i++) queue.done(queue.tryGet()!.item);
  }
  return (loops * SHALLOW_KEYS) / ((performance.now() - start) / 1000);
}

function backlog(queue: Queue<string>, fill: readonly string[] = backlogKeys): number {
  const start = performance.now();
  for (const key of fill) queue.add(key);
  if (queue.len() !== BACKLOG_KEYS) throw new Error(`backlog holds ${queue.len()} items`);
  let cycles = 0;
  for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) {
    queue.done(got.item);
    cycles++;
  }
  if (cycles !== BACKLOG_KEYS) throw new Error(`drained ${cycles} items`);
  return cycles / ((performance.now() - start) / 1000);
}

const inFlight: string[] = [];

function backlogWorkers(queue: Queue<string>): number {
  const start = performance.now();
  for (const key of backlogKeys) queue.add(key);
  let cycles = 0;
  while (queue.len() > 0) {
    for (let got = queue.tryGet(); got !== undefined; got = inFlight.length < WORKERS ? queue.tryGet() : undefined) {
      inFlight.push(got.item);
    }
    for (const item of inFlight) queue.done(item);
    cycles += inFlight.length;
    inFlight.length = 0;
  }
  if (cycles !== BACKLOG_KEYS) throw new Error(`drained ${cycles} items`);
  return cycles / ((performance.now() - start) / 1000);
}

interface Scenario {
  readonly name: string;
  run(queue: Queue<string>, cycles: number): number | Promise<number>;
}

const scenarios: readonly Scenario[] = [
  { name: `shallow, ${SHALLOW_KEYS.toLocaleString('en')} keys, tryGet`, run: (q, n) => shallowTryGet(q, n) },
  { name: `shallow, ${SHALLOW_KEYS.toLocaleString('en')} keys, await get`, run: (q, n) => shallowGet(q, n) },
  {
    name: `batch: add ${SHALLOW_KEYS.toLocaleString('en')}, then get+done ${SHALLOW_KEYS.toLocaleString('en')}`,
    run: (q, n) => batch(q, n),
  },
  { name: `backlog, ${BACKLOG_KEYS.toLocaleString('en')} keys, 1 worker`, run: (q) => backlog(q) },
  { name: `backlog, ${BACKLOG_KEYS.toLocaleString('en')} keys, ${WORKERS} workers`, run: (q) => backlogWorkers(q) },
  {
    name: `backlog, ${BACKLOG_KEYS.toLocaleString('en')} new keys each round, 1 worker`,
    run: (q) => {
      const fill = freshKeys();
      return backlog(q, fill);
    },
  },
];

/** Shallow cycles per round: enough for a stable figure in about a second. */
const SHALLOW_CYCLES: Record<ProviderName, number> = { 'no-op': 4_000_000, 'prom-client': 400_000 };

async function best(kind: QueueKind, provider: ProviderName, scenario: Scenario): Promise<number> {
  const queue = makeQueue(kind, provider);
  const cycles = SHALLOW_CYCLES[provider];
  await scenario.run(queue, cycles); // warm-up
  let top = 0;
  for (let round = 0; round < ROUNDS; round++) top = Math.max(top, await scenario.run(queue, cycles));
  queue.shutDown();
  return top;
}

function format(rate: number): string {
  return `${(rate / 1e6).toFixed(2)} M/s`;
}

const KINDS = ['queue', 'rate-limiting', 'priority'] as const;

/**
 * The anchor: controller-runtime's own `BenchmarkAddGetDone` (pkg/controller/priorityqueue/priorityqueue_test.go,
 * commit 86a0d40e): an unnamed (metrics-free) priority queue, 1,000 `Add` then 1,000 `Get` + `Done` per
 * iteration, goroutines and channels included. Reported at roughly 1 to 3.3 M items/s on one laptop core.
 */
const GO_ADD_GET_DONE_ITEMS_PER_S = { low: 1e6, high: 3.3e6 };
const PROVIDERS = ['no-op', 'prom-client'] as const;

/** One measurement per child process, so rows do not inherit each other's JIT and heap state. */
function measureInChild(kind: QueueKind, provider: ProviderName, scenarioIndex: number): Promise<number> {
  return measureArgsInChild(['--row', kind, provider, String(scenarioIndex)]);
}

function measureArgsInChild(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1]!, [...args], { stdio: 'pipe' });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.pipe(process.stderr);
    child.on('error', reject);
    child.on('exit', (code) => {
      const rate = Number(output.trim());
      if (code === 0 && Number.isFinite(rate)) resolve(rate);
      else reject(new Error(`bench ${args.join(' ')} failed (exit ${code}): ${output}`));
    });
  });
}

/**
 * The floor under the backlog rows: two `Map.get` per key (what an add and a done each cost at least: the
 * queue's dirty and processing sets) over the backlog's 100,000 keys, keys per second, best of the rounds.
 */
function bareLookups(): number {
  const map = new Map(backlogKeys.map((key, i) => [key, i]));
  let top = 0;
  let sink = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    const start = performance.now();
    for (const key of backlogKeys) sink += (map.get(key) ?? 0) + (map.get(key) ?? 0);
    const rate = backlogKeys.length / ((performance.now() - start) / 1000);
    if (round > 0) top = Math.max(top, rate); // round 0 warms up
  }
  if (sink < 0) throw new Error('unreachable');
  return top;
}

async function main(): Promise<void> {
  if (process.argv.includes('--lookups')) {
    process.stdout.write(`${bareLookups()}\n`);
    return;
  }
  const rowArg = process.argv.indexOf('--row');
  if (rowArg !== -1) {
    const [kind, provider, index] = process.argv.slice(rowArg + 1) as [QueueKind, ProviderName, string];
    process.stdout.write(`${await best(kind, provider, scenarios[Number(index)]!)}\n`);
    return;
  }
  const rows: string[] = [];
  const results = new Map<string, number>();
  for (const kind of KINDS) {
    for (const provider of PROVIDERS) {
      for (const [index, scenario] of scenarios.entries()) {
        const rate = await measureInChild(kind, provider, index);
        results.set(`${kind}|${provider}|${index}`, rate);
        rows.push(`| ${kind} | ${provider} | ${scenario.name} | ${format(rate)} | ${(1e9 / rate).toFixed(0)} |`);
      }
    }
  }

  console.log(`Node ${process.version}, one process per row, best of ${ROUNDS} rounds after a warm-up, real clock\n`);
  console.log('| queue | metrics provider | scenario | add/get/done cycles | ns/cycle |');
  console.log('|---|---|---|---:|---:|');
  for (const row of rows) console.log(row);

  const shallow = results.get('queue|no-op|0')!;
  const deep = results.get('queue|no-op|3')!;
  const pqBatch = results.get('priority|no-op|2')!;
  console.log(
    `\nGoals (queue, no-op provider): shallow >= 5 M/s: ${shallow >= 5e6 ? 'met' : 'missed'} (${format(shallow)}); ` +
      `backlog >= half of shallow: ${deep >= shallow / 2 ? 'met' : 'missed'} ` +
      `(${format(deep)}, ${((deep / shallow) * 100).toFixed(0)}%); the floor under it, two bare Map.get per key over the same ${BACKLOG_KEYS.toLocaleString('en')} keys: ${format(await measureArgsInChild(['--lookups']))}`,
  );
  console.log(
    `Anchor: controller-runtime BenchmarkAddGetDone (pkg/controller/priorityqueue/priorityqueue_test.go), ` +
      `about ${format(GO_ADD_GET_DONE_ITEMS_PER_S.low)} to ${format(GO_ADD_GET_DONE_ITEMS_PER_S.high)} items on one ` +
      `laptop core; this port, same loop (priority, no-op, batch): ${format(pqBatch)}`,
  );
}

await main();
