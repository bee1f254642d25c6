import { describe, expect, it } from 'vitest';
import {
  bucketRateLimiter,
  defaultControllerRateLimiter,
  FakeClock,
  itemExponentialFailureRateLimiter,
  itemFastSlowRateLimiter,
  maxOfRateLimiter,
  priorityQueueRateLimiter,
  type RateLimiter,
  withMaxWaitRateLimiter,
} from '../../src/queue/index.js';

function whens<T>(limiter: RateLimiter<T>, item: T, n: number): number[] {
  return Array.from({ length: n }, () => limiter.when(item));
}

describe('itemExponentialFailureRateLimiter', () => {
  it('doubles from the base per failure of an item, capped at the max, until forget', () => {
    const limiter = itemExponentialFailureRateLimiter<string>(5, 1_000_000);
    expect(whens(limiter, 'a', 20)).toEqual([
      5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10_240, 20_480, 40_960, 81_920, 163_840, 327_680, 655_360,
      1_000_000, 1_000_000,
    ]);
    expect(limiter.numRequeues('a')).toBe(20);
    expect(whens(limiter, 'b', 2)).toEqual([5, 10]);
    expect(limiter.numRequeues('b')).toBe(2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(whens(limiter, 'a', 3)).toEqual([5, 10, 20]);
    expect(limiter.numRequeues('b')).toBe(2);
  });

  it('a zero base never delays, past float range too (Go turns 0 × ∞ into a duration of at most zero)', () => {
    const limiter = itemExponentialFailureRateLimiter<string>(0, 1_000_000);
    const delays = whens(limiter, 'a', 1100);
    expect(delays.every((d) => d === 0)).toBe(true);
    expect(limiter.numRequeues('a')).toBe(1100);
  });

  it('matches client-go TestItemExponentialFailureRateLimiter (1 ms .. 1 s)', () => {
    const limiter = itemExponentialFailureRateLimiter<string>(1, 1000);
    expect(whens(limiter, 'one', 5)).toEqual([1, 2, 4, 8, 16]);
    expect(limiter.numRequeues('one')).toBe(5);
    expect(whens(limiter, 'two', 2)).toEqual([1, 2]);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).toBe(0);
    expect(limiter.when('one')).toBe(1);
  });

  it('returns the max, never an overflowed value, after very many failures (client-go OverFlow test)', () => {
    const ms = itemExponentialFailureRateLimiter<string>(1, 1_000_000);
    whens(ms, 'one', 5);
    expect(ms.when('one')).toBe(32);
    whens(ms, 'overflow', 1000);
    expect(ms.when('overflow')).toBe(1_000_000);
    whens(ms, 'beyond-float', 2000);
    expect(ms.when('beyond-float')).toBe(1_000_000);

    const minute = 60_000;
    const hour = 3_600_000;
    const long = itemExponentialFailureRateLimiter<string>(minute, 1000 * hour);
    whens(long, 'two', 2);
    expect(long.when('two')).toBe(4 * minute);
    whens(long, 'overflow', 1000);
    expect(long.when('overflow')).toBe(1000 * hour);
  });

  it('caps at the max once base·2^n exceeds the longest Go duration (2^63 ns), even below the max', () => {
    const limiter = itemExponentialFailureRateLimiter<string>(1, Number.MAX_VALUE);
    whens(limiter, 'a', 43);
    expect(limiter.when('a')).toBe(2 ** 43);
    expect(limiter.when('a')).toBe(Number.MAX_VALUE);
  });
});

describe('itemFastSlowRateLimiter', () => {
  it('waits fast for the first attempts, then slow, per item, until forget (client-go test)', () => {
    const limiter = itemFastSlowRateLimiter<string>(5, 10_000, 3);
    expect(whens(limiter, 'one', 5)).toEqual([5, 5, 5, 10_000, 10_000]);
    expect(limiter.numRequeues('one')).toBe(5);
    expect(whens(limiter, 'two', 2)).toEqual([5, 5]);
    expect(limiter.numRequeues('two')).toBe(2);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).toBe(0);
    expect(limiter.when('one')).toBe(5);
  });
});

describe('bucketRateLimiter', () => {
  it('grants the burst at once, then one token per 1/qps, on the given clock', () => {
    const clock = new FakeClock();
    const limiter = bucketRateLimiter<string>(10, 100, clock);
    const burst = Array.from({ length: 100 }, (_, i) => limiter.when(`key-${i}`));
    expect(burst).toEqual(new Array(100).fill(0));
    expect(whens(limiter, 'x', 3)).toEqual([100, 200, 300]);
    expect(limiter.numRequeues('x')).toBe(0);
  });

  it('refills at qps from the debt, partially, and never beyond the burst', () => {
    const clock = new FakeClock();
    const limiter = bucketRateLimiter<string>(10, 100, clock);
    whens(limiter, 'x', 103);
    clock.step(1000);
    expect(whens(limiter, 'x', 8)).toEqual([0, 0, 0, 0, 0, 0, 0, 100]);
    clock.step(50);
    expect(limiter.when('x')).toBe(150);
    clock.step(1_000_000);
    expect(whens(limiter, 'x', 101)).toEqual([...new Array(100).fill(0), 100]);
  });

  it('charges a reservation even while the previous ones are still pending', () => {
    const clock = new FakeClock();
    const limiter = bucketRateLimiter<string>(2, 1, clock);
    expect(whens(limiter, 'x', 3)).toEqual([0, 500, 1000]);
    clock.step(250);
    expect(limiter.when('x')).toBe(1250);
  });

  it('never delays at infinite qps; gives the burst once at qps 0; never grants with burst 0', () => {
    const clock = new FakeClock();
    expect(whens(bucketRateLimiter(Number.POSITIVE_INFINITY, 0, clock), 'x', 3)).toEqual([0, 0, 0]);
    const zero = bucketRateLimiter<string>(0, 2, clock);
    expect(whens(zero, 'x', 3)).toEqual([0, 0, Number.POSITIVE_INFINITY]);
    clock.step(1_000_000);
    expect(zero.when('x')).toBe(Number.POSITIVE_INFINITY);
    expect(whens(bucketRateLimiter(10, 0, clock), 'x', 2)).toEqual([
      Number.POSITIVE_INFINITY,
      Number.POSITIVE_INFINITY,
    ]);
  });
});

describe('maxOfRateLimiter', () => {
  it('returns the longest delay and the most requeues, and forgets in all (client-go test)', () => {
    const limiter = maxOfRateLimiter<string>(
      itemFastSlowRateLimiter<string>(5, 3000, 3),
      itemExponentialFailureRateLimiter<string>(1, 1000),
    );
    expect(whens(limiter, 'one', 5)).toEqual([5, 5, 5, 3000, 3000]);
    expect(limiter.numRequeues('one')).toBe(5);
    expect(whens(limiter, 'two', 2)).toEqual([5, 5]);
    expect(limiter.numRequeues('two')).toBe(2);
    limiter.forget('one');
    expect(limiter.numRequeues('one')).toBe(0);
    expect(limiter.when('one')).toBe(5);
  });

  it('charges every limiter on each when, even the ones that lose', () => {
    const clock = new FakeClock();
    const bucket = bucketRateLimiter<string>(1, 2, clock);
    const limiter = maxOfRateLimiter<string>(itemExponentialFailureRateLimiter<string>(10_000, 10_000), bucket);
    expect(whens(limiter, 'x', 2)).toEqual([10_000, 10_000]);
    expect(bucket.when('y')).toBe(1000);
  });

  it('of no limiters returns 0', () => {
    expect(maxOfRateLimiter<string>().when('x')).toBe(0);
    expect(maxOfRateLimiter<string>().numRequeues('x')).toBe(0);
  });
});

describe('withMaxWaitRateLimiter', () => {
  it('caps the delay and passes requeues and forget through', () => {
    const limiter = withMaxWaitRateLimiter(itemExponentialFailureRateLimiter<string>(100, 1_000_000), 500);
    expect(whens(limiter, 'x', 5)).toEqual([100, 200, 400, 500, 500]);
    expect(limiter.numRequeues('x')).toBe(5);
    limiter.forget('x');
    expect(limiter.when('x')).toBe(100);
  });
});

describe('defaultControllerRateLimiter', () => {
  it('is the max of 5 ms..1000 s exponential per item and a 10 qps, burst 100 bucket', () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>(clock);
    const firstFailures = Array.from({ length: 100 }, (_, i) => limiter.when(`ns/obj-${i}`));
    expect(firstFailures).toEqual(new Array(100).fill(5));
    expect(limiter.when('ns/obj-100')).toBe(100);
    expect(limiter.when('ns/obj-101')).toBe(200);
    expect(limiter.when('ns/obj-0')).toBe(300);
    expect(limiter.numRequeues('ns/obj-0')).toBe(2);
    clock.step(1_000_000);
    expect(whens(limiter, 'ns/obj-0', 18)).toEqual([
      20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10_240, 20_480, 40_960, 81_920, 163_840, 327_680, 655_360, 1_000_000,
      1_000_000,
    ]);
    limiter.forget('ns/obj-0');
    expect(limiter.numRequeues('ns/obj-0')).toBe(0);
    expect(limiter.when('ns/obj-0')).toBe(5);
  });
});

describe('priorityQueueRateLimiter', () => {
  it('is the 5 ms..1000 s exponential per item alone: no shared bucket', () => {
    const limiter = priorityQueueRateLimiter<string>();
    const firstFailures = Array.from({ length: 150 }, (_, i) => limiter.when(`ns/obj-${i}`));
    expect(firstFailures).toEqual(new Array(150).fill(5));
    expect(whens(limiter, 'ns/obj-0', 3)).toEqual([10, 20, 40]);
    expect(limiter.numRequeues('ns/obj-0')).toBe(4);
  });
});
