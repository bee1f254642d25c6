/** Shared by the calibration tests: runs cases judged at every step and states failures compactly. */
import { expect } from 'vitest';
import type { QueueVerdict } from '../../src/calibrate/compare.js';
import { type CalibrationCase, describeCase, runCase } from '../../src/calibrate/run.js';
import type { RuleId } from '../../src/diagnosis/rule.js';
import { findScenario, resolveParams } from '../../src/simulate/index.js';

export const MINUTE = 60_000;
export const TEN_SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
export const BOTH_FLAVORS = ['controller-runtime', 'component-base'] as const;
/**
 * Every queue a controller runs: controller-runtime's priority queue (its default) and classic queue, and
 * component-base's classic queue (its only one).
 */
export const EVERY_QUEUE = [
  { flavor: 'controller-runtime', queue: 'priority' },
  { flavor: 'controller-runtime', queue: 'classic' },
  { flavor: 'component-base', queue: 'classic' },
] as const;

/**
 * The seeds a near miss or a problem runs on with each queue (`EVERY_QUEUE`, by index) in the test command: the
 * ten seeds shared out, each on one queue (1–4 on the priority queue, 5–7 on controller-runtime's classic one, 8–10
 * on component-base's), so that every seed runs and every queue meets three noise draws or more, within the test
 * command's time. `WQD_ALL_SEEDS=1` runs all ten on every queue: the full sweep, thirty runs a case
 * (`WQD_ALL_SEEDS=1 npx vitest run test/calibrate/problems.test.ts test/calibrate/near-misses.test.ts`).
 */
export function seedsForQueue(queueIndex: number): readonly number[] {
  if (process.env.WQD_ALL_SEEDS === '1') return TEN_SEEDS;
  const shares = [TEN_SEEDS.slice(0, 4), TEN_SEEDS.slice(4, 7), TEN_SEEDS.slice(7)];
  return shares[queueIndex] ?? TEN_SEEDS;
}

/** Each near miss (near-misses.test.ts) and the findings it looks like, which its truth must forbid by the end of the run. */
export const NEAR_MISSES = {
  healthy: ['WorkqueueBacklog', 'WorkqueueSaturated', 'WorkqueuePersistentFailures', 'WorkqueueHotLoop'],
  'transient-errors': ['WorkqueuePersistentFailures'],
  'dependency-outage': ['WorkqueuePersistentFailures'],
  'requeue-after': ['WorkqueuePersistentFailures', 'WorkqueueHotLoop'],
  'event-per-sync': ['WorkqueueHotLoop'],
  'initial-list': ['WorkqueueBacklog'],
  'startup-list': ['WorkqueueBacklog'],
  'sawtooth-batches': ['WorkqueueBacklog'],
  'bulk-change': ['WorkqueueBacklog'],
} as const satisfies Record<string, readonly RuleId[]>;

/** The planted problems of problems.test.ts, each run on every queue. */
export const PROBLEMS = [
  { scenario: 'persistent-failure', durationMs: 45 * MINUTE },
  { scenario: 'requeue-as-error', durationMs: 45 * MINUTE },
  { scenario: 'gradual-backlog', durationMs: 45 * MINUTE },
  { scenario: 'saturation', workers: 1 },
  { scenario: 'saturation', workers: 2 },
  { scenario: 'starved-backlog' },
] as const;

/** Every run near-misses.test.ts and problems.test.ts judge at every step. */
export function nearMissAndProblemRuns(): CalibrationCase[] {
  const scenarios: readonly CalibrationCase[] = [
    ...Object.keys(NEAR_MISSES).map((scenario) => ({ scenario })),
    ...PROBLEMS,
  ];
  return scenarios.flatMap((c) =>
    EVERY_QUEUE.flatMap((variant, queueIndex) => seedsForQueue(queueIndex).map((seed) => ({ ...c, ...variant, seed }))),
  );
}

/** What identifies a case's simulated run: its scenario, scrape interval and parameters, defaults filled in. */
export function runKey({ scenario, scrapeIntervalMs, ...params }: CalibrationCase): string {
  return JSON.stringify([scenario, scrapeIntervalMs ?? null, resolveParams(params, findScenario(scenario))]);
}

/** `flavor/queue`, for test names. */
export function variantName(variant: (typeof EVERY_QUEUE)[number]): string {
  return `${variant.flavor}, ${variant.queue}`;
}

/** `c` run and judged at the end and at every evaluation step after the first `for`. */
export async function judgeEveryStep(c: CalibrationCase): Promise<QueueVerdict[]> {
  const verdicts = await runCase(c, {}, { everyStep: true });
  expect(verdicts.length, `${describeCase(c)}: verdicts`).toBeGreaterThan(0);
  return verdicts;
}

/** Every verdict passes; a failure lists, per queue and outcome, the minutes at which it was judged wrong. */
export function expectAllPass(verdicts: readonly QueueVerdict[], label: string): void {
  const failures = new Map<string, number[]>();
  for (const v of verdicts) {
    if (v.pass) continue;
    const key = `${v.name ?? '-'} missed [${v.missed.join(',')}] unexpected [${v.unexpected.join(',')}] ${v.problems.join('; ')}`;
    failures.set(key, [...(failures.get(key) ?? []), Math.round((v.elapsedMs / MINUTE) * 10) / 10]);
  }
  expect(
    [...failures].map(([what, minutes]) => `${what} at ${minutes.join(' ')} min`),
    label,
  ).toEqual([]);
}
