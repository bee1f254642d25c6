/**
 * Wall time of one `runVirtual` per scenario (seed 8001, 30 simulated minutes, default parameters),
 * the run alone without writing the recording text: the cost the calibration tests and
 * `calibrate:mutations` pay per simulation. One warm-up run per scenario, then the best and the
 * median of several repetitions, all in this process.
 * Run: `npx tsx bench/simulate-cost.ts [repetitions]` (default 3).
 */
import { runVirtual } from '../src/simulate/index.js';

const SCENARIOS = ['healthy', 'initial-list', 'hot-loop-status-write', 'backlog'] as const;
const PARAMS = { seed: 8001, durationMs: 30 * 60_000 };
const repetitions = Number(process.argv[2] ?? 3);

async function timeRun(scenario: string): Promise<number> {
  const start = performance.now();
  await runVirtual(scenario, PARAMS);
  return performance.now() - start;
}

const fmt = (ms: number): string => ms.toFixed(0);

console.log(`Node ${process.version}, seed ${PARAMS.seed}, 30 minutes, ${repetitions} repetitions after a warm-up\n`);
console.log('| scenario | best ms | median ms |');
console.log('|---|---:|---:|');
for (const scenario of SCENARIOS) {
  await timeRun(scenario);
  const times: number[] = [];
  for (let i = 0; i < repetitions; i++) times.push(await timeRun(scenario));
  times.sort((a, b) => a - b);
  console.log(`| ${scenario} | ${fmt(times[0]!)} | ${fmt(times[Math.floor(times.length / 2)]!)} |`);
}
