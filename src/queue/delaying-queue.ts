/**
 * The delaying queue: a work queue that can add an item later (client-go `TypedDelayingInterface`).
 *
 * Waiting items sit in a min-heap by ready time, one entry per item; a single clock timer is armed
 * for the earliest. Waiting items are not in the queue: not in `len()`, not in depth, not counted
 * as adds until they become ready. On shutdown, waiting items are dropped.
 */
import type { Timer } from './clock.js';
import { type CounterMetric, createRetriesMetric, noopMetricsProvider } from './metrics.js';
import { type HeapEntry, MinHeap } from './min-heap.js';
import { type Queue, type QueueOptions, WorkQueue } from './queue.js';

/**
 * Which `addAfter` calls `workqueue_retries_total` counts:
 * - `every-add-after`: every call, a delay <= 0 included (client-go's delaying queue);
 * - `positive-delay`: only calls with a delay > 0 (controller-runtime's priority queue).
 */
export type RetriesCountingMode = 'every-add-after' | 'positive-delay';

export interface DelayingQueueOptions extends QueueOptions {
  /** Missing: `every-add-after`, as client-go. */
  retriesCountedOn?: RetriesCountingMode | undefined;
}

export interface DelayingQueue<T> extends Queue<T> {
  /**
   * Adds `item` once `ms` milliseconds have passed on the queue's clock; `ms <= 0` adds it now.
   * An item already waiting keeps the earlier of its two ready times. Ignored after shutdown.
   * A waiting item added directly meanwhile stays waiting too (its later add is then deduplicated
   * or counts as a new add, as in client-go).
   */
  addAfter(item: T, ms: number): void;
  /** Addition to client-go: the number of items waiting for their ready time. */
  waitingLen(): number;
}

interface WaitingEntry<T> extends HeapEntry {
  readonly item: T;
}

export class DelayingWorkQueue<T> extends WorkQueue<T> implements DelayingQueue<T> {
  /** Items waiting for their ready time, earliest first; ties in `addAfter` order. */
  private readonly waiting = new MinHeap<WaitingEntry<T>>();
  /** The heap entry of each waiting item. Invariant: same items as `waiting`. */
  private readonly waitingByItem = new Map<T, WaitingEntry<T>>();
  private seq = 0;
  /** Armed for the heap's earliest entry, at `timerAt`; undefined when nothing waits. */
  private timer: Timer | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  private readonly retries: CounterMetric | undefined;
  private readonly countEveryAddAfter: boolean;

  constructor(options: DelayingQueueOptions = {}) {
    super(options);
    this.retries = createRetriesMetric(options.metricsProvider ?? noopMetricsProvider, options.name ?? '');
    this.countEveryAddAfter = (options.retriesCountedOn ?? 'every-add-after') === 'every-add-after';
  }

  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    if (this.retries !== undefined && (this.countEveryAddAfter || ms > 0)) this.retries.inc();
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const at = this.clock.now() + ms;
    const existing = this.waitingByItem.get(item);
    if (existing !== undefined) {
      if (at < existing.at) {
        existing.at = at;
        this.waiting.fix(existing);
        this.arm();
      }
      return;
    }
    const entry: WaitingEntry<T> = { item, at, seq: this.seq++, index: -1 };
    this.waiting.push(entry);
    this.waitingByItem.set(item, entry);
    this.arm();
  }

  waitingLen(): number {
    return this.waiting.size;
  }

  protected override onShutdown(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.waiting.clear();
    this.waitingByItem.clear();
  }

  /** Makes the timer match the earliest waiting entry (an infinite ready time needs no timer). */
  private arm(): void {
    const at = this.waiting.peek()?.at ?? Number.POSITIVE_INFINITY;
    if (at === this.timerAt) return;
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = at;
    if (at !== Number.POSITIVE_INFINITY) this.timer = this.clock.after(at - this.clock.now(), this.fire);
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (let next = this.waiting.peek(); next !== undefined && next.at <= now; next = this.waiting.peek()) {
      this.waiting.pop();
      this.waitingByItem.delete(next.item);
      this.add(next.item);
    }
    this.arm();
  };
}

/** A delaying queue (client-go `NewTypedDelayingQueueWithConfig`). */
export function createDelayingQueue<T>(options?: DelayingQueueOptions): DelayingQueue<T> {
  return new DelayingWorkQueue<T>(options);
}
