/**
 * Verdicts hold at a scrape interval of a minute, Prometheus's default, not only at the simulator's 15 s: a window
 * of a minute is now and then empty there (a scrape's jitter puts both neighbours outside it), and a count of a
 * few samples moves by one with the same jitter. Each case failed on one of them: a backlog lost at every step its
 * minute's floor was empty, and a component-base pool never called saturated while the long window's span test
 * read a sample short.
 */
import { describe, expect, it } from 'vitest';
import type { CalibrationCase } from '../../src/calibrate/run.js';
import { describeCase } from '../../src/calibrate/run.js';
import { expectAllPass, judgeEveryStep, MINUTE } from './support.js';

const MINUTE_SCRAPES = 60_000;

const CASES: CalibrationCase[] = [
  {
    scenario: 'backlog',
    seed: 48033,
    workers: 1,
    keys: 200_000,
    durationMs: 45 * MINUTE,
    flavor: 'controller-runtime',
    queue: 'classic',
    scrapeIntervalMs: MINUTE_SCRAPES,
  },
  {
    scenario: 'mixed',
    seed: 48066,
    workers: 2,
    keys: 600,
    durationMs: 30 * MINUTE,
    flavor: 'component-base',
    scrapeIntervalMs: MINUTE_SCRAPES,
  },
];

describe('a scrape interval of a minute', () => {
  it.each(CASES.map((c) => [describeCase(c), c] as const))('%s', { timeout: 300_000 }, async (name, c) => {
    const verdicts = await judgeEveryStep(c);
    expect(
      verdicts.some((v) => v.canMiss),
      `${name}: owes its finding at some step`,
    ).toBe(true);
    expectAllPass(verdicts, name);
  });
});
