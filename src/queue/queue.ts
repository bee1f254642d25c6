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
import { type Clock, realClock, type Timer } from './clock.js';
import {
  createQueueMetrics,
  type MetricsProvider,
  type MetricsSlot,
  noopMetricsProvider,
  type QueueMetrics,
  UNFINISHED_WORK_UPDATE_PERIOD_MS,
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

/** Item states, as bits: client-go's `dirty` and `processing` sets folded into one field. */
const IDLE = 0;
/** In client-go's `dirty` set: needs processing (queued, or re-added while being processed). */
const DIRTY = 1;
/** In client-go's `processing` set: handed out, not yet done. */
const PROCESSING = 2;
/**
 * Idle entries are swept once there are at least this many and more than twice the most entries
 * ever live (dirty or processing) at once since the last sweep: the memory stays proportional to the
 * peak backlog, and a backlog that comes back with the same keys (a resync) finds its entries.
 */
const SWEEP_MIN_IDLE = 1024;

/**
 * The queue's record of one item. An IDLE entry (in neither set) is kept until the next sweep:
 * updating an entry in place costs nothing, while deleting and re-inserting a Map key on every cycle
 * makes V8 reallocate the table every few operations.
 */
class ItemEntry<T> implements MetricsSlot {
  state = DIRTY;
  addedAt = Number.NaN;
  startedAt = Number.NaN;
  prevInFlight: MetricsSlot | undefined = undefined;
  nextInFlight: MetricsSlot | undefined = undefined;

  constructor(readonly item: T) {}
}

export class WorkQueue<T> implements Queue<T> {
  /**
   * Entries in hand-out order. Invariant: each has state exactly DIRTY (dirty, not being processed)
   * and appears once.
   */
  private readonly fifo = new RingBuffer<ItemEntry<T>>();
  /**
   * The entry of every item the queue knows. DIRTY|PROCESSING: re-added while being processed, and
   * then not in `fifo` until `done`. Items without an entry are IDLE.
   */
  private entries = new Map<T, ItemEntry<T>>();
  /** Entries whose state is IDLE. */
  private idleEntries = 0;
  /** Most entries live (not IDLE) at once since the last sweep. */
  private peakLive = 0;
  /** Entries with the PROCESSING bit. */
  private processingCount = 0;
  /**
   * The entry handed out last, if no `done` came since: a one-entry cache that spares `done` its
   * lookup in the common get → done sequence of a single worker. Always PROCESSING when set.
   */
  private lastHandedOut: ItemEntry<T> | undefined = undefined;
  /** Pending `get()` calls, oldest first. Invariant: non-empty only while `fifo` is empty and not shutting down. */
  private readonly waiters = new RingBuffer<(result: GetResult<T>) => void>(4);
  /** Pending `shutDownWithDrain()` calls; non-empty only while shutting down with items being processed. */
  private drainWaiters: (() => void)[] = [];
  private closing = false;
  private readonly metrics: QueueMetrics | undefined;
  private refreshTimer: Timer | undefined;
  protected readonly clock: Clock;

  constructor(options: QueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.metrics = createQueueMetrics(options.metricsProvider ?? noopMetricsProvider, options.name ?? '', this.clock);
    if (this.metrics !== undefined) this.scheduleRefresh();
  }

  add(item: T): void {
    if (this.closing) return;
    let entry = this.entries.get(item);
    if (entry === undefined) {
      entry = new ItemEntry(item);
      this.entries.set(item, entry);
      this.noteLive();
    } else {
      const state = entry.state;
      if ((state & DIRTY) !== 0) return;
      entry.state = state | DIRTY;
      if ((state & PROCESSING) !== 0) {
        this.metrics?.add(entry);
        return;
      }
      this.idleEntries--;
      this.noteLive();
    }
    this.metrics?.add(entry);
    this.fifo.push(entry);
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
    this.lastHandedOut = undefined;
    const entry = last !== undefined && last.item === item ? last : this.entries.get(item);
    if (entry === undefined || (entry.state & PROCESSING) === 0) return;
    this.processingCount--;
    this.metrics?.done(entry);
    if ((entry.state & DIRTY) !== 0) {
      entry.state = DIRTY;
      this.fifo.push(entry);
      if (this.waiters.length > 0) this.serveWaiters();
    } else {
      entry.state = IDLE;
      if (++this.idleEntries >= SWEEP_MIN_IDLE && this.idleEntries > 2 * this.peakLive) this.sweep();
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
    const entry = this.fifo.shift()!;
    this.lastHandedOut = entry;
    entry.state = PROCESSING;
    this.processingCount++;
    this.metrics?.get(entry);
    return entry.item;
  }

  private serveWaiters(): void {
    while (this.waiters.length > 0 && this.fifo.length > 0) {
      const resolve = this.waiters.shift()!;
      resolve({ item: this.take(), shutdown: false });
    }
  }

  private noteLive(): void {
    const live = this.entries.size - this.idleEntries;
    if (live > this.peakLive) this.peakLive = live;
  }

  /**
   * Drops the IDLE entries by copying the live ones into a new map (cheaper than deleting most keys
   * of a large Map, which shrinks and rehashes it repeatedly). Amortized O(1) per `done`: it runs
   * only once the idle entries outnumber twice the live ones.
   */
  private sweep(): void {
    const live = new Map<T, ItemEntry<T>>();
    for (const [item, entry] of this.entries) if (entry.state !== IDLE) live.set(item, entry);
    this.entries = live;
    this.idleEntries = 0;
    this.peakLive = live.size;
  }

  private beginShutdown(): void {
    if (!this.closing) {
      this.closing = true;
      this.refreshTimer?.cancel();
      this.refreshTimer = undefined;
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

  /**
   * Arms the next unfinished-work refresh, one period after now (on the FakeClock, "now" in a firing
   * timer is its due time, so refreshes land exactly every period from the queue's creation).
   */
  private scheduleRefresh(): void {
    this.refreshTimer = this.clock.after(UNFINISHED_WORK_UPDATE_PERIOD_MS, this.refresh, { background: true });
  }

  private readonly refresh = (): void => {
    this.refreshTimer = undefined;
    if (this.closing) return;
    this.metrics!.updateUnfinishedWork();
    this.scheduleRefresh();
  };
}

/** A work queue (client-go `NewTypedWithConfig`). */
export function createQueue<T>(options?: QueueOptions): Queue<T> {
  return new WorkQueue<T>(options);
}
