/**
 * The service's heap grows by at most `HEAP_GROWING_PERCENT` between full collections (src/service/heap-growth.ts).
 * Two child processes hold the same live set (300,000 small objects) while allocating bursts that die young, as
 * evaluations do; the one that called `limitHeapGrowth` first must peak far lower (V8's default lets the heap reach
 * several times what stays live), and a flag given on the command line wins over it.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { limitHeapGrowth } from '../../src/service/heap-growth.js';

/** Holds 300,000 objects, allocates 60 bursts of 100,000 (two kept at a time), prints its peak RSS in KiB. */
const CHILD = `
import { limitHeapGrowth } from './src/service/heap-growth.ts';
if (process.argv[1] === 'limited') console.log(JSON.stringify({ set: limitHeapGrowth() }));
const live = [];
for (let i = 0; i < 300_000; i++) live.push({ a: i, b: 'x' + i, c: [i, i + 1] });
const kept = [];
for (let round = 0; round < 60; round++) {
  const burst = [];
  for (let i = 0; i < 100_000; i++) burst.push({ round, i, s: [i, round] });
  kept.push(burst);
  if (kept.length > 2) kept.shift();
}
const { readFileSync } = await import('node:fs');
console.log(JSON.stringify({ peakKiB: Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]), live: live.length }));
`;

async function peakOf(mode: 'limited' | 'default'): Promise<{ peakKiB: number; set?: boolean }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD, mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  expect(code).toBe(0);
  return Object.assign(
    {},
    ...out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as object),
  );
}

describe('heap growth between full collections', () => {
  it('keeps the peak near what stays live', { timeout: 120_000 }, async () => {
    const limited = await peakOf('limited');
    const unlimited = await peakOf('default');
    expect(limited.set).toBe(true);
    expect(limited.peakKiB).toBeLessThan(unlimited.peakKiB * 0.7);
  });

  it('leaves a growth given on the command line alone', () => {
    expect(limitHeapGrowth(['--heap-growing-percent=50'])).toBe(false);
    expect(limitHeapGrowth(['--expose-gc', '--heap-growing-percent', '50'])).toBe(false);
  });
});
