/**
 * Time sources for the work queue: the real clock, and a FakeClock that only moves when stepped.
 *
 * Every time the queue reads (metrics timestamps, delayed-item ready times, the bucket rate limiter,
 * the unfinished-work refresher) comes from one injected Clock, so virtual time yields virtual
 * durations. Times are milliseconds (fractions allowed).
 */
import { type HeapEntry, MinHeap } from './min-heap.js';

/** A pending one-shot timer. */
export interface Timer {
  /** Stops the timer if it has not fired yet; a no-op afterwards. */
  cancel(): void;
}

export interface TimerOptions {
  /**
   * A background timer does not keep a Node process alive (the real clock unrefs it), like the
   * queue's metrics refresher. Default false: a pending delayed item keeps the process alive, as a
   * worker waiting on it would expect. The FakeClock ignores this.
   */
  background?: boolean;
}

export interface Clock {
  /** The current time in milliseconds. Only differences are used by the queue. */
  now(): number;
  /**
   * Calls `fn` once, `ms` milliseconds from now. `ms <= 0` or NaN means "as soon as possible" (never
   * synchronously inside `after`); `ms = Infinity` means never.
   */
  after(ms: number, fn: () => void, options?: TimerOptions): Timer;
}

/** Longest delay one Node timer can hold (2^31 - 1 ms); longer delays are re-armed in chunks. */
const MAX_NODE_TIMEOUT_MS = 2_147_483_647;

class RealTimer implements Timer {
  private handle: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly dueAt: number,
    private readonly fn: () => void,
    private readonly background: boolean,
  ) {
    this.arm();
  }

  cancel(): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
  }

  private arm(): void {
    const remaining = Math.min(Math.max(this.dueAt - realClock.now(), 0), MAX_NODE_TIMEOUT_MS);
    this.handle = setTimeout(this.fire, remaining);
    if (this.background) this.handle.unref();
  }

  private readonly fire = (): void => {
    this.handle = undefined;
    // Node may fire a timer up to a millisecond early relative to performance.now(); a long delay
    // fires at the end of each chunk. Either way, re-arm until the due time has really passed.
    if (realClock.now() < this.dueAt) {
      this.arm();
      return;
    }
    this.fn();
  };
}

const NEVER: Timer = { cancel() {} };

/** A timer delay as a number >= 0: negative and NaN delays mean "now". */
function delayOf(ms: number): number {
  if (ms > 0) return ms;
  return 0;
}

/**
 * The real clock: `now()` is epoch milliseconds with sub-millisecond resolution
 * (`performance.timeOrigin + performance.now()`, monotonic within a process); `after` uses Node timers.
 */
export const realClock: Clock = {
  now(): number {
    return performance.timeOrigin + performance.now();
  },
  after(ms: number, fn: () => void, options?: TimerOptions): Timer {
    if (ms === Number.POSITIVE_INFINITY) return NEVER;
    return new RealTimer(realClock.now() + delayOf(ms), fn, options?.background === true);
  },
};

class FakeTimer implements Timer, HeapEntry {
  index = -1;

  constructor(
    public at: number,
    public readonly seq: number,
    readonly fn: () => void,
    private readonly heap: MinHeap<FakeTimer>,
  ) {}

  cancel(): void {
    this.heap.remove(this);
  }
}

/**
 * A clock that only moves when told to, for tests and discrete-event simulation.
 *
 * Contract: everything is synchronous. `step`/`stepTo` fire, in time order (ties in the order they
 * were scheduled), every timer due at or before the new time, with `now()` equal to each timer's
 * due time while it runs; a timer scheduled by a firing timer that is also due fires in the same
 * step. So a delayed item whose ready time passes is in the queue when `step` returns, visible to
 * `tryGet()` at once; a `get()` promise it satisfies is resolved by then, and its continuation runs
 * as a microtask after the synchronous caller yields. Nothing ever happens between steps.
 */
export class FakeClock implements Clock {
  private current: number;
  private readonly timers = new MinHeap<FakeTimer>();
  private seq = 0;
  private stepping = false;

  constructor(startMs = 0) {
    if (!Number.isFinite(startMs)) throw new RangeError(`FakeClock start must be finite, got ${startMs}`);
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Schedules `fn`; a delay <= 0 (or NaN) is due now and fires on the next step, even `step(0)`. */
  after(ms: number, fn: () => void, _options?: TimerOptions): Timer {
    if (ms === Number.POSITIVE_INFINITY) return NEVER;
    const timer = new FakeTimer(this.current + delayOf(ms), this.seq++, fn, this.timers);
    this.timers.push(timer);
    return timer;
  }

  /** Advances time by `ms` (>= 0), firing due timers; see the class comment. */
  step(ms: number): void {
    if (!(ms >= 0) || !Number.isFinite(ms)) throw new RangeError(`FakeClock.step needs a finite ms >= 0, got ${ms}`);
    this.stepTo(this.current + ms);
  }

  /**
   * Advances time to exactly `timeMs` (>= now), firing due timers. Prefer this over
   * `step(next - now())` in event loops: the subtraction can round to just short of `next`.
   */
  stepTo(timeMs: number): void {
    if (!(timeMs >= this.current) || !Number.isFinite(timeMs)) {
      throw new RangeError(`FakeClock.stepTo needs a finite time >= now (${this.current}), got ${timeMs}`);
    }
    if (this.stepping) throw new Error('FakeClock.step is not reentrant: a timer callback tried to step the clock');
    this.stepping = true;
    try {
      for (let next = this.timers.peek(); next !== undefined && next.at <= timeMs; next = this.timers.peek()) {
        this.timers.pop();
        if (next.at > this.current) this.current = next.at;
        next.fn();
      }
      this.current = timeMs;
    } finally {
      this.stepping = false;
    }
  }

  /** Due time of the earliest pending timer, or undefined when none is pending. */
  nextTimerAt(): number | undefined {
    return this.timers.peek()?.at;
  }

  /** Number of pending timers. */
  pendingTimers(): number {
    return this.timers.size;
  }
}
