/**
 * The work queue: client-go `util/workqueue` `Typed[T]` semantics on a single-threaded event loop.
 *
 * Guarantees (as client-go's package comment lists them):
 * - Fair: items are handed out in the order they were added (FIFO).
 * - Stingy: an item added many times before it is handed out is processed once.
 * - Single flight: an item is never handed out again while it is being processed; re-added
 *   meanwhile, it is queued once more after `done`.
 * - Many producers and consumers; pending `get()` calls are served oldest first.
 * - Shutdown: adds are then ignored; queued items are still handed out, then `get` reports shutdown.
 *
 * Items are compared as Map keys (SameValueZero): use strings such as `namespace/name`, numbers, or
 * the same object reference. `undefined` is not a valid item.
 *
 * Everything is synchronous except the delivery of `get()` promises: on a FakeClock, the queue moves
 * only when the clock is stepped or a method is called.
 */
import { type Clock, realClock } from './clock.js';
import {
  createQueueMetrics,
  type MetricsProvider,
  noopMetricsProvider,
  type QueueMetrics,
  startUnfinishedWorkRefresh,
  type UnfinishedWorkRefresh,
} from './metrics.js';
import { RingBuffer } from './ring-buffer.js';

/** Queue configuration, as client-go's `TypedQueueConfig`. Every field is optional. */
export interface QueueOptions {
  /** The queue's name, the `name` label of its metrics. Missing or empty: the queue records no metrics. */
  name?: string | undefined;
  /**
   * Source of every time the queue reads (metrics, delays, the unfinished-work refresher).
   * Missing: `realClock`.
   */
  clock?: Clock | undefined;
  /**
   * Where a named queue's metrics go. Missing: `noopMetricsProvider`, so nothing is recorded
   * (client-go falls back to a process-global provider; this port has no global state).
   */
  metricsProvider?: MetricsProvider | undefined;
}

/** What `get()` resolves to: an item to process, or the news that the queue is shut down and empty. */
export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

/** client-go's `TypedInterface`, plus the non-blocking `tryGet`. */
export interface Queue<T> {
  /** Marks `item` as needing processing. Ignored after shutdown, and while `item` is already waiting. */
  add(item: T): void;
  /** Number of items waiting to be handed out (excludes items re-added while being processed). */
  len(): number;
  /**
   * Resolves with the next item once one is ready (client-go's blocking `Get`), or with
   * `{ shutdown: true }` once the queue is shut down and empty. The caller must call `done(item)`.
   * The item is taken out of the queue synchronously, when it becomes available to this call; only
   * the promise's continuation runs later (a microtask).
   */
  get(): Promise<GetResult<T>>;
  /**
   * Addition to client-go: hands out the next item at once, or returns undefined when none is ready
   * (also after shutdown). Same bookkeeping as `get`, so the caller must call `done(item)`. Lets a
   * discrete-event simulator pull work without awaiting promises. Pending `get()` calls are always
   * served first: an item never waits in the queue while a `get()` is pending.
   */
  tryGet(): { item: T } | undefined;
  /**
   * Marks `item` as processed. If it was re-added while being processed, it is queued again now.
   * A no-op for an item that is not being processed.
   */
  done(item: T): void;
  /**
   * Ignores later adds; `get`/`tryGet` keep handing out the queued items, then `get` reports
   * shutdown. Pending `get()` calls (they exist only while nothing is queued) resolve with shutdown.
   */
  shutDown(): void;
  /**
   * `shutDown`, then resolves once no item is being processed (every in-flight item is `done`).
   * A later `shutDown()` resolves it at once, as client-go's ShutDown stops ShutDownWithDrain waiting.
   */
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
}

const SHUTDOWN: GetResult<never> = Object.freeze({ item: undefined, shutdown: true as const });

/** Slot states, as bits: client-go's `dirty` and `processing` sets folded into one field. */
const IDLE = 0;
/** In client-go's `dirty` set: needs processing (queued, or re-added while being processed). */
const DIRTY = 1;
/** In client-go's `processing` set: handed out, not yet done. */
const PROCESSING = 2;
/**
 * Idle slots are swept once there are at least this many and more than twice the most slots ever
 * live (dirty or processing) at once since the last sweep: the memory stays proportional to the peak
 * backlog, and a backlog that comes back with the same keys (a resync) finds its slots.
 */
const SWEEP_MIN_IDLE = 1024;
const NO_SLOT = -1;

export class WorkQueue<T> implements Queue<T> {
  /*
   * Every item the queue knows has a slot: an index into the per-slot arrays below (a struct of
   * arrays, so that no operation allocates). An IDLE slot (in neither client-go set) is kept until the
   * next sweep: updating a slot costs nothing, while deleting and re-inserting a Map key on every
   * cycle makes V8 reallocate the table every few operations.
   */
  /** The slot of each item the queue knows. */
  private slotOf = new Map<T, number>();
  /** The item of each slot in use; undefined for free and never-used slots. */
  private readonly slotItem: (T | undefined)[] = [];
  /** IDLE, DIRTY and PROCESSING bits of each slot in use. */
  private slotState = new Uint8Array(0);
  /** Slots freed by a sweep, for reuse. */
  private readonly freeSlots: number[] = [];
  /** Slots below this have been used (and are in use or free); the ones above never were. */
  private usedSlots = 0;
  /**
   * Slots in hand-out order. Invariant: each has state exactly DIRTY (dirty, not being processed) and
   * appears once. A DIRTY|PROCESSING slot (re-added while being processed) joins it at `done`.
   */
  private readonly fifo = new RingBuffer<number>();
  /** Slots in use whose state is IDLE. */
  private idleSlots = 0;
  /** Most slots live (not IDLE) at once since the last sweep. */
  private peakLive = 0;
  /** Slots with the PROCESSING bit. */
  private processingCount = 0;
  /**
   * The slot handed out last, if no `done` came since, or NO_SLOT: a one-entry cache that spares
   * `done` its lookup in the common get → done sequence of a single worker. Always PROCESSING when set.
   */
  private lastHandedOut = NO_SLOT;
  /** Pending `get()` calls, oldest first. Invariant: non-empty only while `fifo` is empty and not shutting down. */
  private readonly waiters = new RingBuffer<(result: GetResult<T>) => void>(4);
  /** Pending `shutDownWithDrain()` calls; non-empty only while shutting down with items being processed. */
  private drainWaiters: (() => void)[] = [];
  private closing = false;
  private readonly metrics: QueueMetrics | undefined;
  private refresh: UnfinishedWorkRefresh | undefined;
  protected readonly clock: Clock;

  constructor(options: QueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.metrics = createQueueMetrics(options.metricsProvider ?? noopMetricsProvider, options.name ?? '', this.clock);
    const metrics = this.metrics;
    if (metrics !== undefined)
      this.refresh = startUnfinishedWorkRefresh(this.clock, () => metrics.updateUnfinishedWork());
  }

  add(item: T): void {
    if (this.closing) return;
    let slot = this.slotOf.get(item);
    if (slot === undefined) {
      slot = this.allocateSlot(item);
    } else {
      const state = this.slotState[slot]!;
      if ((state & DIRTY) !== 0) return;
      this.slotState[slot] = state | DIRTY;
      if ((state & PROCESSING) !== 0) {
        this.metrics?.add(slot);
        return;
      }
      this.idleSlots--;
      this.noteLive();
    }
    this.metrics?.add(slot);
    this.fifo.push(slot);
    if (this.waiters.length > 0) this.serveWaiters();
  }

  len(): number {
    return this.fifo.length;
  }

  get(): Promise<GetResult<T>> {
    if (this.fifo.length > 0) return Promise.resolve({ item: this.take(), shutdown: false });
    if (this.closing) return Promise.resolve(SHUTDOWN);
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  tryGet(): { item: T } | undefined {
    if (this.fifo.length === 0) return undefined;
    return { item: this.take() };
  }

  done(item: T): void {
    const last = this.lastHandedOut;
    this.lastHandedOut = NO_SLOT;
    const slot = last !== NO_SLOT && this.slotItem[last] === item ? last : this.slotOf.get(item);
    if (slot === undefined) return;
    const state = this.slotState[slot]!;
    if ((state & PROCESSING) === 0) return;
    this.processingCount--;
    this.metrics?.done(slot);
    if ((state & DIRTY) !== 0) {
      this.slotState[slot] = DIRTY;
      this.fifo.push(slot);
      if (this.waiters.length > 0) this.serveWaiters();
    } else {
      this.slotState[slot] = IDLE;
      if (++this.idleSlots >= SWEEP_MIN_IDLE && this.idleSlots > 2 * this.peakLive) this.sweep();
    }
    if (this.processingCount === 0 && this.drainWaiters.length > 0) this.releaseDrainWaiters();
  }

  shutDown(): void {
    this.beginShutdown();
    this.releaseDrainWaiters();
  }

  shutDownWithDrain(): Promise<void> {
    this.beginShutdown();
    if (this.processingCount === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
    });
  }

  shuttingDown(): boolean {
    return this.closing;
  }

  /** Called once, when the queue starts shutting down. Subclasses release their own resources here. */
  protected onShutdown(): void {}

  /** Hands out the head of the non-empty fifo: dirty → processing. */
  private take(): T {
    const slot = this.fifo.shift()!;
    this.lastHandedOut = slot;
    this.slotState[slot] = PROCESSING;
    this.processingCount++;
    this.metrics?.get(slot);
    return this.slotItem[slot] as T;
  }

  /** A DIRTY slot for a new item: a freed one, or the next never used one (growing the arrays). */
  private allocateSlot(item: T): number {
    let slot = this.freeSlots.pop();
    if (slot === undefined) {
      if (this.usedSlots === this.slotState.length) this.growSlots();
      slot = this.usedSlots++;
    }
    this.slotItem[slot] = item;
    this.slotState[slot] = DIRTY;
    this.slotOf.set(item, slot);
    this.noteLive();
    return slot;
  }

  private growSlots(): void {
    const capacity = Math.max(16, this.slotState.length * 2);
    const states = new Uint8Array(capacity);
    states.set(this.slotState);
    this.slotState = states;
    while (this.slotItem.length < capacity) this.slotItem.push(undefined);
    this.metrics?.grow(capacity);
  }

  private noteLive(): void {
    const live = this.slotOf.size - this.idleSlots;
    if (live > this.peakLive) this.peakLive = live;
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0 && this.fifo.length > 0) {
      const resolve = this.waiters.shift()!;
      resolve({ item: this.take(), shutdown: false });
    }
  }

  /**
   * Frees the IDLE slots, copying the live items into a new map (cheaper than deleting most keys of a
   * large Map, which shrinks and rehashes it repeatedly). Amortized O(1) per `done`: it runs only once
   * the idle slots outnumber twice the live ones.
   */
  private sweep(): void {
    const live = new Map<T, number>();
    for (const [item, slot] of this.slotOf) {
      if (this.slotState[slot] !== IDLE) {
        live.set(item, slot);
      } else {
        this.slotItem[slot] = undefined;
        this.freeSlots.push(slot);
      }
    }
    this.slotOf = live;
    this.idleSlots = 0;
    this.peakLive = live.size;
  }

  private beginShutdown(): void {
    if (!this.closing) {
      this.closing = true;
      this.refresh?.stop();
      this.onShutdown();
    }
    // Waiters exist only while the fifo is empty, so every one of them now sees shutdown.
    while (this.waiters.length > 0) this.waiters.shift()!(SHUTDOWN);
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** A work queue (client-go `NewTypedWithConfig`). */
export function createQueue<T>(options?: QueueOptions): Queue<T> {
  return new WorkQueue<T>(options);
}
