/**
 * Does parsing big pages stall an HTTP server? A trivial fastify route on 127.0.0.1 answers a
 * bounded number of requests from a client in a worker thread (so that the client's own timing is
 * not delayed by the server's event loop), first idle, then while a 200,000-line page is parsed
 * every 2 s through `parseOffThread` and appended to a history with `appendInChunks`, and, for
 * contrast, while the same work runs inline (`parseExposition` + `append`). Each history has
 * taken one scrape of the page before its phase starts (steady state: the first scrape of a new
 * target also creates every series; its cost is printed apart).
 * Run: `npx tsx bench/event-loop.ts`. Prints a markdown table.
 */
import { availableParallelism, loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import Fastify from 'fastify';
import { closeParseWorker, parseOffThread } from '../src/exposition/parse-off-thread.js';
import { keepFamilies, parseExposition } from '../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../src/metrics/names.js';
import { History } from '../src/store/history.js';
import { controllerManagerPage } from './controller-manager-page.js';

const REQUESTS = 300_000;
const CONCURRENCY = 4;
const PERIOD_MS = 2000;

/** The client: keep-alive connections, `concurrency` requests in flight, latency of each in ms. */
const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { port, requests, concurrency } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const latencies = new Float64Array(requests);
let started = 0, done = 0;
function one() {
  if (started >= requests) return;
  const i = started++;
  const t0 = performance.now();
  http.get({ host: '127.0.0.1', port, path: '/ping', agent }, (res) => {
    res.resume();
    res.on('end', () => {
      latencies[i] = performance.now() - t0;
      if (++done === requests) { agent.destroy(); parentPort.postMessage(latencies, [latencies.buffer]); }
      else one();
    });
  }).on('error', (e) => { throw e; });
}
for (let k = 0; k < concurrency; k++) one();
`;

interface Result {
  phase: string;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  seconds: number;
  rounds: number;
  roundMs: number;
  loopP99: number;
  loopMax: number;
}

function percentile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function runClient(port: number): Promise<Float64Array> {
  const worker = new Worker(CLIENT, { eval: true, workerData: { port, requests: REQUESTS, concurrency: CONCURRENCY } });
  const latencies = await new Promise<Float64Array>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  return latencies;
}

async function phase(
  name: string,
  port: number,
  background: ((round: number) => Promise<void>) | undefined,
): Promise<Result> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let running = true;
  let rounds = 0;
  let busyMs = 0;
  const bg = (async () => {
    if (background === undefined) return;
    while (running) {
      const t0 = performance.now();
      await background(rounds);
      const took = performance.now() - t0;
      busyMs += took;
      rounds++;
      if (running) await sleep(Math.max(0, PERIOD_MS - took));
    }
  })();
  loop.enable();
  const t0 = performance.now();
  const latencies = await runClient(port);
  const seconds = (performance.now() - t0) / 1000;
  loop.disable();
  running = false;
  await bg;
  latencies.sort();
  return {
    phase: name,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    p999: percentile(latencies, 0.999),
    max: latencies[latencies.length - 1] as number,
    seconds,
    rounds,
    roundMs: rounds > 0 ? busyMs / rounds : 0,
    loopP99: loop.percentile(99) / 1e6,
    loopMax: loop.max / 1e6,
  };
}

const app = Fastify({ logger: false });
app.get('/ping', async () => 'pong');
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const port = typeof address === 'object' && address !== null ? address.port : 0;

const page = controllerManagerPage(200_000);
const body = Buffer.from(page.text, 'utf8');
const T0 = Date.now();
const keep = keepFamilies(DIAGNOSTIC_FAMILIES);

// Warm up the route, the parser and the worker.
await phase('warm-up', port, undefined);
await parseOffThread(body, { keepFamilies: DIAGNOSTIC_FAMILIES });

const results: Result[] = [];
results.push(await phase('idle', port, undefined));

const target = { id: 'cm', labels: { job: 'cm' } };
const offThread = new History();
const firstStarted = performance.now();
const firstCpu = process.cpuUsage();
await offThread.appendInChunks(target, await parseOffThread(body, { keepFamilies: DIAGNOSTIC_FAMILIES }), T0 - 15_000);
const firstCpuMs = (process.cpuUsage(firstCpu).user + process.cpuUsage(firstCpu).system) / 1000;
const firstWallMs = performance.now() - firstStarted;
results.push(
  await phase('200k-line page every 2 s: `parseOffThread` + `appendInChunks`', port, async (round) => {
    const parsed = await parseOffThread(body, { keepFamilies: DIAGNOSTIC_FAMILIES });
    await offThread.appendInChunks(target, parsed, T0 + round * 15_000);
  }),
);
results.push(await phase('idle again', port, undefined));

const inline = new History();
inline.append(target, parseExposition(body.toString('utf8'), { keep }), T0 - 15_000);
results.push(
  await phase('contrast: the same work inline (`parseExposition` + `append`)', port, async (round) => {
    const parsed = parseExposition(body.toString('utf8'), { keep });
    inline.append(target, parsed, T0 + round * 15_000);
  }),
);

results.push(await phase('idle, third time', port, undefined));

await app.close();
await closeParseWorker();

// The baseline is the first idle phase; the later idle phases show how much idle p99 itself varies.
const idle = results[0] as Result;
console.log(
  `Node ${process.version}; ${REQUESTS.toLocaleString('en')} GET /ping per phase, ${CONCURRENCY} in flight, keep-alive; ` +
    `page ${page.lines.toLocaleString('en')} lines / ${(page.bytes / 1e6).toFixed(1)} MB; history series after the run: ${offThread.stats().series.toLocaleString('en')}; ` +
    `RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB. ` +
    `First scrape into an empty history (creates every series, off-thread path): ${firstWallMs.toFixed(0)} ms wall, ${firstCpuMs.toFixed(0)} ms CPU (all threads). ` +
    `Load average at the end: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} on ${availableParallelism()} CPUs.\n`,
);
console.log(
  '| phase | p50 ms | p99 ms | p99.9 ms | max ms | p99 vs first idle | event-loop delay p99 / max ms | parse rounds | ms per round (wall, until appended) | s |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.phase} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.p999.toFixed(2)} | ${r.max.toFixed(1)} | ${(r.p99 / idle.p99).toFixed(2)}× | ${r.loopP99.toFixed(1)} / ${r.loopMax.toFixed(1)} | ${r.rounds} | ${r.rounds > 0 ? r.roundMs.toFixed(0) : '–'} | ${r.seconds.toFixed(1)} |`,
  );
}
