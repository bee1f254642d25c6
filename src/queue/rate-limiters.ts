/**
 * Rate limiters: how long an item waits before it is retried (client-go `default_rate_limiters.go`).
 * Delays are milliseconds. Per-item limiters count failures per item until `forget`; the bucket is
 * one budget shared by all items.
 */
import { type Clock, realClock } from './clock.js';

export interface RateLimiter<T> {
  /** Records a failure of `item` and returns how long (ms) it should wait before its retry. */
  when(item: T): number;
  /** Stops tracking `item` (success, or giving up). */
  forget(item: T): void;
  /** How many failures of `item` are being tracked. */
  numRequeues(item: T): number;
}

/** Go's `math.MaxInt64` nanoseconds (the longest `time.Duration`) as a float64, which is 2^63. */
const MAX_DURATION_NS = 2 ** 63;

/**
 * `baseMs · 2^failures`, capped at `maxMs` (client-go `ItemExponentialFailureRateLimiter`): with
 * 5 ms..1000 s, an item's retries wait 5, 10, 20, 40 … ms until 1000 s. As client-go, a backoff
 * beyond the longest Go duration (or beyond float range) is `maxMs`, never an overflowed value.
 */
export function itemExponentialFailureRateLimiter<T>(baseMs: number, maxMs: number): RateLimiter<T> {
  const failures = new Map<T, number>();
  return {
    when(item: T): number {
      const exp = failures.get(item) ?? 0;
      failures.set(item, exp + 1);
      const backoff = baseMs * 2 ** exp;
      // A zero base past float range is 0 × ∞ = NaN: Go's conversion of NaN to a duration gives one of at most
      // zero (MinInt64 on amd64, 0 on arm64), which the queue adds at once.
      if (Number.isNaN(backoff)) return 0;
      if (!(backoff * 1e6 <= MAX_DURATION_NS)) return maxMs;
      return Math.min(backoff, maxMs);
    },
    forget(item: T): void {
      failures.delete(item);
    },
    numRequeues(item: T): number {
      return failures.get(item) ?? 0;
    },
  };
}

/** `fastMs` for an item's first `maxFastAttempts` failures, `slowMs` after (client-go `ItemFastSlowRateLimiter`). */
export function itemFastSlowRateLimiter<T>(fastMs: number, slowMs: number, maxFastAttempts: number): RateLimiter<T> {
  const failures = new Map<T, number>();
  return {
    when(item: T): number {
      const count = (failures.get(item) ?? 0) + 1;
      failures.set(item, count);
      return count <= maxFastAttempts ? fastMs : slowMs;
    },
    forget(item: T): void {
      failures.delete(item);
    },
    numRequeues(item: T): number {
      return failures.get(item) ?? 0;
    },
  };
}

/** `ns` nanoseconds as milliseconds, truncated to whole nanoseconds as a Go `time.Duration` is. */
function durationMs(ns: number): number {
  return Math.trunc(ns) / 1e6;
}

/**
 * A token bucket shared by all items (client-go `BucketRateLimiter` over golang.org/x/time/rate):
 * it starts full with `burst` tokens and refills at `qps` tokens per second up to `burst`. Each
 * `when` reserves one token, going into debt when none is left, and returns the wait (ms) until
 * that token exists: with 10 qps and burst 100, 100 calls in a burst get 0, then 100, 200, 300 … ms.
 * `qps = Infinity` never delays; `qps <= 0` hands out the burst once, then never again. A bucket that
 * cannot ever grant the token (burst < 1, or an empty bucket at qps <= 0) returns Infinity, the
 * Go limiter's "never" (a delaying queue then never adds the item). Times come from `clock`
 * (default: the real clock).
 */
export function bucketRateLimiter<T = unknown>(qps: number, burst: number, clock: Clock = realClock): RateLimiter<T> {
  let tokens = burst;
  let remainingBurst = burst;
  let last = clock.now();
  return {
    when(): number {
      if (qps === Number.POSITIVE_INFINITY) return 0;
      if (burst < 1) return Number.POSITIVE_INFINITY;
      if (!(qps > 0)) {
        if (remainingBurst < 1) return Number.POSITIVE_INFINITY;
        remainingBurst -= 1;
        return 0;
      }
      const now = clock.now();
      // Refill for the time since the last reservation (none if the clock went backwards).
      const elapsedNs = now > last ? Math.round((now - last) * 1e6) : 0;
      let available = tokens + (elapsedNs / 1e9) * qps;
      if (available > burst) available = burst;
      available -= 1;
      let waitNs = 0;
      if (available < 0) {
        waitNs = (-available / qps) * 1e9;
        if (waitNs > MAX_DURATION_NS) return Number.POSITIVE_INFINITY;
      }
      last = now;
      tokens = available;
      return durationMs(waitNs);
    },
    forget(): void {},
    numRequeues(): number {
      return 0;
    },
  };
}

/**
 * Asks every limiter and returns the longest delay (client-go `MaxOfRateLimiter`); every limiter
 * records the failure, so a shared bucket is charged even when a per-item backoff is longer.
 */
export function maxOfRateLimiter<T>(...limiters: readonly RateLimiter<T>[]): RateLimiter<T> {
  return {
    when(item: T): number {
      let delay = 0;
      for (const limiter of limiters) {
        const current = limiter.when(item);
        if (current > delay) delay = current;
      }
      return delay;
    },
    forget(item: T): void {
      for (const limiter of limiters) limiter.forget(item);
    },
    numRequeues(item: T): number {
      let count = 0;
      for (const limiter of limiters) {
        const current = limiter.numRequeues(item);
        if (current > count) count = current;
      }
      return count;
    },
  };
}

/** Caps another limiter's delay at `maxMs` (client-go `WithMaxWaitRateLimiter`). */
export function withMaxWaitRateLimiter<T>(limiter: RateLimiter<T>, maxMs: number): RateLimiter<T> {
  return {
    when(item: T): number {
      const delay = limiter.when(item);
      return Math.min(delay, maxMs);
    },
    forget(item: T): void {
      limiter.forget(item);
    },
    numRequeues(item: T): number {
      return limiter.numRequeues(item);
    },
  };
}

/** The longest wait of the default per-item exponential backoff (client-go's and controller-runtime's): 1000 s. */
export const DEFAULT_MAX_BACKOFF_MS = 1_000_000;

/**
 * client-go's default controller limiter (`DefaultTypedControllerRateLimiter`): the max of a
 * per-item exponential backoff from 5 ms to 1000 s and a shared bucket of 10 qps, burst 100.
 */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock): RateLimiter<T> {
  return maxOfRateLimiter<T>(
    itemExponentialFailureRateLimiter<T>(5, DEFAULT_MAX_BACKOFF_MS),
    bucketRateLimiter<T>(10, 100, clock),
  );
}

/**
 * controller-runtime's default since it switched to its priority queue: the per-item exponential
 * backoff from 5 ms to 1000 s alone, without the shared bucket.
 */
export function priorityQueueRateLimiter<T>(): RateLimiter<T> {
  return itemExponentialFailureRateLimiter<T>(5, DEFAULT_MAX_BACKOFF_MS);
}
