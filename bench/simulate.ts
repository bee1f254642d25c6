/**
 * Speed of the simulator on virtual time: simulated seconds per wall second for `healthy`,
 * `backlog` and `mixed` at default parameters (30 minutes, 15 s scrapes), the time to write the
 * recording text, and the memory of a long, wide run (mixed, 60 minutes, 16 workers).
 *
 * Goals: healthy >= 5,000x real time, mixed >= 500x (it contains a hot loop of ~170 syncs/s).
 * One child process per row (no shared JIT or heap state), best of several rounds after a warm-up
 * (at least 3, and at least 5 s of runs).
 * Run: `npx tsx bench/simulate.ts`.
 */
import { fork } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { runVirtual } from '../src/simulate/index.js';

/** At least this many rounds per row, and more until `MIN_MEASURED_MS` of runs: short rows get many tries. */
const ROUNDS = 3;
const MIN_MEASURED_MS = 5_000;

interface Row {
  readonly scenario: string;
  readonly minutes: number;
  readonly workers?: number;
  readonly goal?: number;
}

const ROWS: readonly Row[] = [
  { scenario: 'healthy', minutes: 30, goal: 5_000 },
  { scenario: 'backlog', minutes: 30 },
  { scenario: 'mixed', minutes: 30, goal: 500 },
  { scenario: 'mixed', minutes: 60, workers: 16 },
];

interface Measurement {
  /** Simulated seconds per wall second, the run alone (events, syncs, scrapes). */
  speed: number;
  /** Same, including writing the recording text. */
  speedWithText: number;
  /** Simulated seconds per CPU second of this process (user + system): what a core of its own delivers, less sensitive to a loaded machine. */
  speedPerCpu: number;
  syncsPerWallSecond: number;
  syncs: number;
  samples: number;
  textBytes: number;
  heapMiB: number;
  rssMiB: number;
}

async function measure(row: Row): Promise<Measurement> {
  const params = { durationMs: row.minutes * 60_000, ...(row.workers === undefined ? {} : { workers: row.workers }) };
  await runVirtual(row.scenario, { ...params, durationMs: Math.min(params.durationMs, 5 * 60_000) }); // warm-up
  let best: Measurement | undefined;
  let measuredMs = 0;
  for (let round = 0; round < ROUNDS || measuredMs < MIN_MEASURED_MS; round++) {
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    const run = await runVirtual(row.scenario, params);
    const ran = performance.now() - start;
    const cpu = process.cpuUsage(cpuStart);
    let bytes = 0;
    run.recording.writeTo((chunk) => {
      bytes += chunk.length;
    });
    const total = performance.now() - start;
    measuredMs += total;
    const memory = process.memoryUsage();
    const seconds = run.stats.simulatedMs / 1000;
    const m: Measurement = {
      speed: seconds / (ran / 1000),
      speedWithText: seconds / (total / 1000),
      speedPerCpu: seconds / ((cpu.user + cpu.system) / 1e6),
      syncsPerWallSecond: run.stats.syncs / (ran / 1000),
      syncs: run.stats.syncs,
      samples: run.stats.samples,
      textBytes: bytes,
      heapMiB: memory.heapUsed / 2 ** 20,
      rssMiB: memory.rss / 2 ** 20,
    };
    if (best === undefined || m.speed > best.speed) best = m;
  }
  return best!;
}

function inChild(index: number): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1]!, ['--row', String(index)], { stdio: 'pipe' });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.pipe(process.stderr);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(output) as Measurement);
      else reject(new Error(`bench row ${index} failed (exit ${code}): ${output}`));
    });
  });
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  const rowArg = process.argv.indexOf('--row');
  if (rowArg !== -1) {
    process.stdout.write(JSON.stringify(await measure(ROWS[Number(process.argv[rowArg + 1])]!)));
    return;
  }
  console.log(
    `Node ${process.version}, one process per row, best of at least ${ROUNDS} rounds (and ${MIN_MEASURED_MS / 1000} s) after a warm-up, virtual time\n`,
  );
  console.log(
    '| scenario | simulated | x real time | with text | per CPU second | syncs | syncs/wall s | samples | text | heap | rss |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const verdicts: string[] = [];
  for (const [index, row] of ROWS.entries()) {
    const m = await inChild(index);
    const label = row.workers === undefined ? row.scenario : `${row.scenario}, ${row.workers} workers`;
    console.log(
      `| ${label} | ${row.minutes}m | ${fmt(m.speed)}x | ${fmt(m.speedWithText)}x | ${fmt(m.speedPerCpu)}x | ${fmt(m.syncs)} | ` +
        `${fmt(m.syncsPerWallSecond)} | ` +
        `${fmt(m.samples)} | ${fmt(m.textBytes / 2 ** 20, 1)} MiB | ${fmt(m.heapMiB)} MiB | ${fmt(m.rssMiB)} MiB |`,
    );
    if (row.goal !== undefined) {
      verdicts.push(
        `${row.scenario} >= ${fmt(row.goal)}x: ${m.speed >= row.goal ? 'met' : 'missed'} (${fmt(m.speed)}x)`,
      );
    }
  }
  console.log(`\nGoals: ${verdicts.join('; ')}`);
  console.log(
    `Load average when done: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${availableParallelism()} CPUs`,
  );
}

await main();
