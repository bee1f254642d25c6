/**
 * A controller whose queue no event has reached yet is observable. controller-runtime's priority queue makes its
 * depth gauge a series per priority, at the first add of that priority, while its adds counter (like every
 * provider's) exists from the queue's making: a quiet controller just started, or one watching objects that seldom
 * change, shows adds at zero and no depth at all, for minutes or for good. `WorkqueueNotObservable` reads the adds
 * counter. And like every rule it finds nothing before its condition has held for its whole `for`.
 */
import { describe, expect, it } from 'vitest';
import { expectAllPass, judgeEveryStep, MINUTE } from '../calibrate/support.js';

describe('a quiet controller on the priority queue', () => {
  it.each([
    // One change in about three hours: no add within the run, so no depth series at all.
    ['no event within the run', 0.0001, 20],
    // One change every 40 s: the first add comes a minute or two in, before which no depth series exists.
    ['its first event a minute or two in', 0.025, 15],
  ] as const)('%s: never reported not observable', { timeout: 300_000 }, async (_name, rate, minutes) => {
    const verdicts = await judgeEveryStep({
      scenario: 'saturation',
      seed: 9210,
      workers: 1,
      syncMs: 10_000,
      rate,
      keys: 20_000,
      durationMs: minutes * MINUTE,
      flavor: 'controller-runtime',
      queue: 'priority',
      background: 'off',
    });
    expect(verdicts.flatMap((v) => v.found)).not.toContain('WorkqueueNotObservable');
    expect(verdicts.some((v) => v.name === 'machine')).toBe(true);
    expectAllPass(verdicts, 'quiet priority queue');
  });
});

describe('a target rule', () => {
  it('finds nothing before its condition has held for its whole `for`, as its alert', {
    timeout: 300_000,
  }, async () => {
    // A manager whose work-queue metrics provider was claimed by another package: controller metrics, no workqueue_*.
    const verdicts = await judgeEveryStep({
      scenario: 'not-observable',
      seed: 9212,
      durationMs: 12 * MINUTE,
      flavor: 'controller-runtime',
      background: 'off',
    });
    const foundAt = (v: (typeof verdicts)[number]) => v.found.includes('WorkqueueNotObservable');
    // The first judged steps come before the rule's five-minute `for` has elapsed; the last come after it.
    expect(verdicts.filter((v) => v.elapsedMs < 5 * MINUTE && foundAt(v)).map((v) => v.elapsedMs)).toEqual([]);
    expect(verdicts.some((v) => v.elapsedMs < 5 * MINUTE)).toBe(true);
    expect(verdicts.filter((v) => v.elapsedMs >= 6 * MINUTE).every(foundAt)).toBe(true);
    expectAllPass(verdicts, 'provider claimed');
  });
});
