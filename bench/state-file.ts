/**
 * Cost of `--state-dir`: writing the scraped history as its state file, and reading it back at start, for 10
 * and 100 queues (synthetic controller managers of 10 queues each, 30 minutes at 15 s), against the same
 * history written as a recording (`historyToRecording`, OpenMetrics text) and gzip'd, for contrast.
 *
 * A write is timed from the history to the compressed bytes (the file write itself is one small write and an
 * fsync): wall time, CPU time of the process (the compression runs on the thread pool, in it), and the longest
 * stretch without a turn of the event loop meanwhile (the encoding runs in slices). Median of 7 writes. Run: `npx tsx bench/state-file.ts`.
 */
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { constants, gzip } from 'node:zlib';
import { staticTargets } from '../src/discovery/static.js';
import { keepFamilies, parseExposition } from '../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../src/metrics/names.js';
import { DEFAULT_SCRAPE_SETTINGS } from '../src/scrape/scrape-settings.js';
import { scrapeLabels } from '../src/sources/target-provider.js';
import { History } from '../src/store/history.js';
import { historyToRecording } from '../src/store/history-recording.js';
import { encodeHistoryState, restoreHistoryState } from '../src/store/state-file.js';
import { stateFileLimits } from '../src/store/state-file-limits.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

const QUEUES = [10, 100];
const QUEUES_PER_TARGET = 10;
const INTERVAL_MS = 15_000;
const HISTORY_MS = 30 * 60_000;
const RUNS = 7;
const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
const gzipAsync = promisify(gzip);

const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

function filledHistory(queues: number, endMs: number): History {
  const history = new History();
  const urls = Array.from({ length: queues / QUEUES_PER_TARGET }, (_, i) => `http://127.0.0.1:${9000 + i}/metrics`);
  for (const [i, target] of staticTargets(urls).entries()) {
    const queueProfiles = profiles(i, QUEUES_PER_TARGET);
    for (let t = 0; t <= HISTORY_MS; t += INTERVAL_MS) {
      const page = parseExposition(syntheticPage(queueProfiles, t / 1000), { keep });
      history.append({ id: target.key, labels: scrapeLabels(target) }, page, endMs - HISTORY_MS + t);
    }
  }
  return history;
}

/** The longest stretch the event loop went without running a 1 ms timer, while `work` runs. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ stallMs: number; result: T }> {
  let last = performance.now();
  let longest = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  try {
    const result = await work();
    return { stallMs: Math.max(longest, performance.now() - last), result };
  } finally {
    clearInterval(probe);
  }
}

/** Wall and CPU milliseconds of `work`, and the longest event-loop stall meanwhile; median of RUNS. */
async function measure<T>(
  work: () => Promise<T>,
): Promise<{ wallMs: number; cpuMs: number; stallMs: number; result: T }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  const stall: number[] = [];
  let result!: T;
  for (let run = 0; run < RUNS; run++) {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const measured = await longestStall(work);
    wall.push(performance.now() - started);
    const used = process.cpuUsage(cpuBefore);
    cpu.push((used.user + used.system) / 1000);
    stall.push(measured.stallMs);
    result = measured.result;
  }
  return { wallMs: median(wall), cpuMs: median(cpu), stallMs: median(stall), result };
}

const rows: string[] = [];
for (const queues of QUEUES) {
  const now = Date.now();
  const history = filledHistory(queues, now);
  const { series, samples } = history.stats();
  const state = await measure(() => encodeHistoryState(history, now));
  const readStarted = performance.now();
  const limits = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, queues / QUEUES_PER_TARGET);
  await restoreHistoryState(state.result, new History(), { nowMs: now, limits });
  const readMs = performance.now() - readStarted;
  const recording = await measure(async () =>
    gzipAsync(historyToRecording(history), { level: constants.Z_BEST_SPEED }),
  );
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  rows.push(
    `| ${queues} | ${series} | ${samples} | state file | ${state.wallMs.toFixed(0)} | ${state.cpuMs.toFixed(0)} | ${state.stallMs.toFixed(1)} | ${kib(state.result.length)} | ${readMs.toFixed(0)} |`,
    `| ${queues} | ${series} | ${samples} | recording + gzip | ${recording.wallMs.toFixed(0)} | ${recording.cpuMs.toFixed(0)} | ${recording.stallMs.toFixed(1)} | ${kib(recording.result.length)} | |`,
  );
}
process.stdout.write(
  [
    '| queues | series | samples | format | write ms | write CPU ms | longest event-loop stall ms | size | read ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n'),
);
