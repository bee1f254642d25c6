/**
 * controller-runtime's priority queue (`pkg/controller/priorityqueue`, every controller's queue by
 * default since v0.23) on a single-threaded event loop.
 *
 * Ported from kubernetes-sigs/controller-runtime commit 86a0d40e047cf6b7b18d1eb47d15639821863d05
 * (2026-08-20, `git describe`: v0.24.0-73-g86a0d40e): `priorityqueue.go`, `metrics.go` and the
 * priority depth metric of `pkg/internal/metrics/workqueue.go`. Against release v0.24.1 (3be3f1bf)
 * the package differs only by license headers and the shutdown-deadlock fix #3540, which concerns
 * goroutines blocked on a channel and has no counterpart here. Its tests are ported in
 * `test/queue/priority-queue*.test.ts`.
 *
 * Semantics (as the Go code has them):
 * - Order: ready items by priority, highest first; within a priority by an "added counter", lowest
 *   first. The counter is taken from a queue-wide sequence when an item enters the queue, when its
 *   priority is raised, and when its ready time passes, so a priority level is FIFO by when items
 *   became ready there (Go's `lessReady`). An item readied by an add without delay while it was
 *   waiting keeps its counter, as in Go.
 * - Dedup: an item is queued at most once. A re-add raises its priority to the highest asked for and
 *   its ready time to the earliest (an item already ready stays ready).
 * - Delays: `after > 0` (after the rate limiter, for `rateLimited`: the shorter of `after` and the
 *   limiter's delay, or the limiter's when `after` is 0) makes the item wait until then, out of
 *   `len()` and depth; one clock timer, armed for the earliest waiting item, moves due items to ready
 *   in Go's `lessWaiting` order (ready time, then `lessReady`), as Go's `handleWaitingItems`
 *   goroutine with its ticker. `after <= 0` (or NaN) is no delay.
 * - Single flight: a handed-out item is "locked" until `done`. Re-added meanwhile it is queued again
 *   at once (in `len()` and depth, a counted add) but not handed out before `done`.
 * - Shutdown: adds are ignored, `get` reports shutdown at once and `tryGet` returns undefined, even
 *   with items ready (Go's `GetWithPriority` checks the flag first); waiting items never become ready.
 *   `shutDownWithDrain` is `shutDown`, as in Go ("draining is not used by controller-runtime").
 * - The default rate limiter is `priorityQueueRateLimiter` (per-item exponential, 5 ms to 1000 s),
 *   controller-runtime's default for this queue.
 * Metrics: see `priority-queue-metrics.ts`; an unnamed queue or the no-op provider does no metrics
 * work and arms no refresher.
 *
 * Differences from the Go code, all from running on one thread: adds take effect synchronously
 * (Go buffers them for a goroutine); a pending `get()` is handed an item as soon as one is ready
 * (after each `addWithOpts` call, `done`, or readiness timer), where Go's goroutine may see several
 * adds at once and hand out the best of them; the `logState` goroutine (V(5) logging every 10 s) is
 * not ported; a second `shutDown` is a no-op (Go panics closing a closed channel); the metrics read
 * the injected clock like everything else (Go's metrics read the real clock). Priorities must be
 * safe integers (Go: `int`).
 *
 * Data structures: Go keeps ready and waiting items in two B-trees and skips, while ascending the
 * ready tree, items whose key is being processed. Here both are indexed binary heaps
 * (`ordered-heap.ts`, same orders), and a ready item whose key is being processed is "parked" outside
 * the ready heap until its `done`, keeping its order fields; so hand-out, add, priority raise and
 * readiness are O(log n) and never skip, with the same hand-out order as the Go ascent.
 */
import { type Clock, realClock, type Timer } from './clock.js';
import {
  type MetricsProvider,
  noopMetricsProvider,
  startUnfinishedWorkRefresh,
  type UnfinishedWorkRefresh,
} from './metrics.js';
import { OrderedHeap, type OrderedHeapEntry } from './ordered-heap.js';
import {
  createPriorityQueueMetrics,
  type PriorityQueueMetrics,
  type PriorityQueueMetricsRecord,
} from './priority-queue-metrics.js';
import type { GetResult } from './queue.js';
import { priorityQueueRateLimiter, type RateLimiter } from './rate-limiters.js';
import type { RateLimitingQueue } from './rate-limiting-queue.js';
import { RingBuffer } from './ring-buffer.js';

/** Options of one add (Go's `AddOpts`). Every field is optional. */
export interface AddOpts {
  /** Delay in ms before the item is ready; <= 0, NaN or missing: none. */
  after?: number | undefined;
  /** Ask the rate limiter for the delay (counts a failure of each item). */
  rateLimited?: boolean | undefined;
  /** Higher is handed out first. A safe integer; missing: 0. */
  priority?: number | undefined;
}

export interface PriorityQueueOptions<T = unknown> {
  /** The queue's name, the `name` (and `controller`) label of its metrics. Missing or empty: no metrics. */
  name?: string | undefined;
  /** Source of every time the queue reads. Missing: `realClock`. */
  clock?: Clock | undefined;
  /** Where a named queue's metrics go. Missing: `noopMetricsProvider`. */
  metricsProvider?: MetricsProvider | undefined;
  /** Used by `addRateLimited` and `rateLimited` adds. Missing: `priorityQueueRateLimiter()`. */
  rateLimiter?: RateLimiter<T> | undefined;
}

/** What `getWithPriority()` resolves to. */
export type GetWithPriorityResult<T> =
  | { item: T; priority: number; shutdown: false }
  | { item: undefined; priority: 0; shutdown: true };

/**
 * controller-runtime's `PriorityQueue[T]` (a `TypedRateLimitingInterface` plus `AddWithOpts` and
 * `GetWithPriority`), with the classic port's additions `tryGet` and `waitingLen`.
 */
export interface PriorityQueue<T> extends RateLimitingQueue<T> {
  /** Adds `items` with `opts`; see the module comment. Ignored after shutdown. */
  addWithOpts(opts: AddOpts, ...items: T[]): void;
  /** Like `get`, with the priority the item had when handed out. */
  getWithPriority(): Promise<GetWithPriorityResult<T>>;
  /** The best ready item not being processed, taken at once; undefined when none (or after shutdown). */
  tryGet(): { item: T; priority: number } | undefined;
  /** Number of ready items, including ready items whose key is being processed (Go's `Len`). */
  len(): number;
  /** Addition to Go: the number of items waiting for their ready time. */
  waitingLen(): number;
}

/** Where an item's queue entry is. */
const ABSENT = 0;
/** In the waiting heap (Go: `ReadyAt != nil`). */
const WAITING = 1;
/** In the ready heap. */
const READY = 2;
/** Ready, but its key is being processed: out of the ready heap until `done` (Go skips it in its ascent). */
const PARKED = 3;

/** Returned by `addKey`: what the caller must react to. */
const READY_ADDED = 1;
const WAITING_CHANGED = 2;

/** Idle records are swept as in the classic queue: once there are this many and twice the peak of live ones. */
const SWEEP_MIN_IDLE = 1024;

/**
 * The queue's record of one key: Go's `item` (key, priority, added counter, ready time) while the
 * key is queued, plus whether the key is handed out (Go's `locked` set) and its metrics times. The
 * record outlives Go's item (which is dropped at hand-out) so that a key's cycle allocates nothing.
 */
class Entry<T> implements OrderedHeapEntry, PriorityQueueMetricsRecord {
  index = -1;
  state = ABSENT;
  locked = false;
  priority = 0;
  addedCounter = 0;
  /** Ready time (ms); meaningful while WAITING. */
  readyAt = 0;
  addedAt = Number.NaN;
  startedAt = Number.NaN;
  prevInFlight: PriorityQueueMetricsRecord | undefined = undefined;
  nextInFlight: PriorityQueueMetricsRecord | undefined = undefined;

  constructor(readonly key: T) {}
}

/** Go's `lessReady`: higher priority first, then lower added counter. */
function lessReady<T>(a: Entry<T>, b: Entry<T>): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  return a.addedCounter < b.addedCounter;
}

/** Go's `lessWaiting`: earlier ready time first, then `lessReady`. */
function lessWaiting<T>(a: Entry<T>, b: Entry<T>): boolean {
  if (a.readyAt !== b.readyAt) return a.readyAt < b.readyAt;
  return lessReady(a, b);
}

function priorityOf(priority: number | undefined): number {
  if (priority === undefined || priority === 0) return 0;
  if (!Number.isSafeInteger(priority)) throw new RangeError(`priority must be a safe integer, got ${priority}`);
  return priority;
}

type Waiter<T> = (entry: Entry<T> | undefined) => void;

const SHUTDOWN: GetWithPriorityResult<never> = Object.freeze({ item: undefined, priority: 0 as const, shutdown: true });
const GET_SHUTDOWN: GetResult<never> = Object.freeze({ item: undefined, shutdown: true as const });

export class PriorityWorkQueue<T> implements PriorityQueue<T> {
  /** The record of every key queued or being processed, plus idle ones until the next sweep. */
  private entries = new Map<T, Entry<T>>();
  private readonly ready = new OrderedHeap<Entry<T>>(lessReady);
  private readonly waiting = new OrderedHeap<Entry<T>>(lessWaiting);
  private parked = 0;
  /** Go's `addedCounter`. */
  private addedCounter = 0;
  /** Records neither queued nor locked. */
  private idle = 0;
  /** Most records live at once since the last sweep. */
  private peakLive = 0;
  /** The entry handed out last if no `done` came since: spares `done` its lookup in get → done. */
  private lastHandedOut: Entry<T> | undefined;
  /** Pending `get()` calls, oldest first. Invariant: non-empty only while the ready heap is empty and not shut down. */
  private readonly waiters = new RingBuffer<Waiter<T>>(4);
  private closing = false;
  /** Armed for the earliest waiting entry, at `timerAt`. */
  private timer: Timer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private refresh: UnfinishedWorkRefresh | undefined;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter<T>;
  private readonly metrics: PriorityQueueMetrics | undefined;

  constructor(options: PriorityQueueOptions<T> = {}) {
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? priorityQueueRateLimiter<T>();
    this.metrics = createPriorityQueueMetrics(
      options.metricsProvider ?? noopMetricsProvider,
      options.name ?? '',
      this.clock,
    );
    const metrics = this.metrics;
    if (metrics !== undefined)
      this.refresh = startUnfinishedWorkRefresh(this.clock, () => metrics.updateUnfinishedWork());
  }

  addWithOpts(opts: AddOpts, ...items: T[]): void {
    if (this.closing || items.length === 0) return;
    const priority = priorityOf(opts.priority);
    const after = opts.after ?? 0;
    const rateLimited = opts.rateLimited === true;
    let changes = 0;
    for (const item of items) changes |= this.addKey(item, priority, after, rateLimited);
    this.applyChanges(changes);
  }

  add(item: T): void {
    if (this.closing) return;
    this.applyChanges(this.addKey(item, 0, 0, false));
  }

  addAfter(item: T, ms: number): void {
    if (this.closing) return;
    this.applyChanges(this.addKey(item, 0, ms, false));
  }

  addRateLimited(item: T): void {
    if (this.closing) return;
    this.applyChanges(this.addKey(item, 0, 0, true));
  }

  get(): Promise<GetResult<T>> {
    if (this.closing) return Promise.resolve(GET_SHUTDOWN);
    const entry = this.ready.pop();
    if (entry !== undefined) {
      this.handOut(entry);
      return Promise.resolve({ item: entry.key, shutdown: false });
    }
    return new Promise((resolve) => {
      this.waiters.push((e) => resolve(e === undefined ? GET_SHUTDOWN : { item: e.key, shutdown: false }));
    });
  }

  getWithPriority(): Promise<GetWithPriorityResult<T>> {
    if (this.closing) return Promise.resolve(SHUTDOWN);
    const entry = this.ready.pop();
    if (entry !== undefined) {
      this.handOut(entry);
      return Promise.resolve({ item: entry.key, priority: entry.priority, shutdown: false });
    }
    return new Promise((resolve) => {
      this.waiters.push((e) =>
        resolve(e === undefined ? SHUTDOWN : { item: e.key, priority: e.priority, shutdown: false }),
      );
    });
  }

  tryGet(): { item: T; priority: number } | undefined {
    if (this.closing) return undefined;
    const entry = this.ready.pop();
    if (entry === undefined) return undefined;
    this.handOut(entry);
    return { item: entry.key, priority: entry.priority };
  }

  done(item: T): void {
    const last = this.lastHandedOut;
    this.lastHandedOut = undefined;
    const entry = last !== undefined && last.key === item ? last : this.entries.get(item);
    if (entry === undefined || !entry.locked) return;
    entry.locked = false;
    this.metrics?.done(entry);
    if (entry.state === PARKED) {
      this.parked--;
      entry.state = READY;
      this.ready.push(entry);
      if (this.waiters.length > 0) this.serveWaiters();
    } else if (entry.state === ABSENT) {
      if (++this.idle >= SWEEP_MIN_IDLE && this.idle > 2 * this.peakLive) this.sweep();
    }
  }

  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }

  len(): number {
    return this.ready.size + this.parked;
  }

  waitingLen(): number {
    return this.waiting.size;
  }

  shutDown(): void {
    if (!this.closing) {
      this.closing = true;
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.refresh?.stop();
    }
    while (this.waiters.length > 0) this.waiters.shift()!(undefined);
  }

  /** `shutDown`; resolves at once (Go's `ShutDownWithDrain` just calls `ShutDown`). */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    return Promise.resolve();
  }

  shuttingDown(): boolean {
    return this.closing;
  }

  /** Go's `lockedAddWithOpts` for one key; returns READY_ADDED / WAITING_CHANGED bits. */
  private addKey(key: T, priority: number, afterMs: number, rateLimited: boolean): number {
    let after = Number.isNaN(afterMs) ? 0 : afterMs;
    if (rateLimited) {
      const limited = this.rateLimiter.when(key);
      if (after === 0 || limited < after) after = limited;
    }
    const delayed = after > 0;
    let readyAt = 0;
    if (delayed) {
      readyAt = this.clock.now() + after;
      this.metrics?.retry();
    }

    let entry = this.entries.get(key);
    if (entry === undefined || entry.state === ABSENT) {
      if (entry === undefined) {
        entry = new Entry(key);
        this.entries.set(key, entry);
      } else if (!entry.locked) {
        this.idle--;
      }
      this.noteLive();
      entry.priority = priority;
      entry.addedCounter = this.addedCounter++;
      if (delayed) {
        entry.readyAt = readyAt;
        entry.state = WAITING;
        this.waiting.push(entry);
        return WAITING_CHANGED;
      }
      this.makeReady(entry);
      this.metrics?.add(entry, priority);
      return READY_ADDED;
    }

    const wasWaiting = entry.state === WAITING;
    if (priority > entry.priority) {
      if (!wasWaiting) this.metrics?.updateDepthWithPriority(entry.priority, priority);
      entry.priority = priority;
      entry.addedCounter = this.addedCounter++;
    }
    if (!wasWaiting) {
      // Ready (or parked) stays ready.
      if (entry.state === READY) this.ready.fix(entry);
      return 0;
    }
    if (!delayed) {
      this.waiting.remove(entry);
      this.makeReady(entry);
      this.metrics?.add(entry, entry.priority);
      return READY_ADDED | WAITING_CHANGED;
    }
    if (readyAt < entry.readyAt) entry.readyAt = readyAt;
    this.waiting.fix(entry);
    return WAITING_CHANGED;
  }

  private applyChanges(changes: number): void {
    if ((changes & WAITING_CHANGED) !== 0) this.arm();
    if ((changes & READY_ADDED) !== 0 && this.waiters.length > 0) this.serveWaiters();
  }

  /** Into the ready heap, or parked while its key is being processed. */
  private makeReady(entry: Entry<T>): void {
    if (entry.locked) {
      entry.state = PARKED;
      this.parked++;
    } else {
      entry.state = READY;
      this.ready.push(entry);
    }
  }

  private handOut(entry: Entry<T>): void {
    entry.state = ABSENT;
    entry.locked = true;
    this.lastHandedOut = entry;
    this.metrics?.get(entry, entry.priority);
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0) {
      const entry = this.ready.pop();
      if (entry === undefined) return;
      this.handOut(entry);
      this.waiters.shift()!(entry);
    }
  }

  private noteLive(): void {
    const live = this.entries.size - this.idle;
    if (live > this.peakLive) this.peakLive = live;
  }

  /** Drops idle records (amortized O(1) per `done`, as the classic queue's sweep). */
  private sweep(): void {
    const live = new Map<T, Entry<T>>();
    for (const [key, entry] of this.entries) {
      if (entry.state !== ABSENT || entry.locked) live.set(key, entry);
    }
    this.entries = live;
    this.idle = 0;
    this.peakLive = live.size;
  }

  /** Makes the timer match the earliest waiting entry (an infinite ready time needs no timer). */
  private arm(): void {
    if (this.closing) return;
    const at = this.waiting.peek()?.readyAt ?? Number.POSITIVE_INFINITY;
    if (at === this.timerAt) return;
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = at;
    if (at !== Number.POSITIVE_INFINITY) this.timer = this.clock.after(at - this.clock.now(), this.fire);
  }

  /** Go's `handleWaitingItems` pass: moves every due item to ready, in `lessWaiting` order. */
  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let moved = false;
    for (let next = this.waiting.peek(); next !== undefined && next.readyAt <= now; next = this.waiting.peek()) {
      this.waiting.pop();
      // Sorted by when they became ready, not when they were added.
      next.addedCounter = this.addedCounter++;
      this.metrics?.add(next, next.priority);
      this.makeReady(next);
      moved = true;
    }
    this.arm();
    if (moved && this.waiters.length > 0) this.serveWaiters();
  };
}

/**
 * controller-runtime's priority queue (`priorityqueue.New`). `rateLimiter` defaults to
 * `priorityQueueRateLimiter()`; remember to `forget`, or failures are tracked forever.
 */
export function createPriorityQueue<T>(options?: PriorityQueueOptions<T>): PriorityQueue<T> {
  return new PriorityWorkQueue<T>(options);
}
