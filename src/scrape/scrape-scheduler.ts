/**
 * Scheduling rules for scrapes across many targets:
 *
 * - at most `concurrency` scrapes run at once (a FIFO semaphore; the rest wait their turn), and
 * - a target is never scraped twice at once: while a scrape of target X is running or waiting for a
 *   slot, a new `run(X, …)` does not start, resolves at once with `{ ran: false, reason: 'overlap' }`
 *   and is counted in `skipped(X)`.
 *
 * The scheduler does not time anything: the caller's interval ticks call `run`, and the scrape
 * function bounds its own duration (its timeout).
 */

export type ScheduledRun<T> = { ran: true; value: T } | { ran: false; reason: 'overlap' };

export interface SchedulerStats {
  concurrency: number;
  /** Scrapes running now. */
  running: number;
  /** Scrapes waiting for a slot. */
  waiting: number;
  /** Runs skipped because the target was busy, over all targets. */
  skipped: number;
}

export interface ScrapeScheduler {
  /**
   * Runs `fn` for `targetKey` when a slot is free, unless that target is already busy.
   * Rejects with `fn`'s error when `fn` rejects (the slot is released either way).
   */
  run<T>(targetKey: string, fn: () => Promise<T>): Promise<ScheduledRun<T>>;
  /** True while a scrape of the target runs or waits for a slot. */
  busy(targetKey: string): boolean;
  /** Runs skipped for this target (or for all targets) because it was busy. */
  skipped(targetKey?: string): number;
  stats(): SchedulerStats;
  /** Resolves when nothing runs or waits. */
  idle(): Promise<void>;
}

export function createScrapeScheduler(options: { concurrency: number }): ScrapeScheduler {
  const { concurrency } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const busyKeys = new Set<string>();
  const skippedByKey = new Map<string, number>();
  let skippedTotal = 0;
  let running = 0;
  const waiters: Array<() => void> = [];
  let idleWaiters: Array<() => void> = [];

  const acquire = (): Promise<void> => {
    if (running < concurrency) {
      running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => waiters.push(resolve));
  };
  const release = (): void => {
    const next = waiters.shift();
    if (next)
      next(); // the slot passes straight to the next waiter
    else running--;
  };
  const notifyIdle = (): void => {
    if (busyKeys.size > 0) return;
    const list = idleWaiters;
    idleWaiters = [];
    for (const resolve of list) resolve();
  };

  return {
    async run<T>(targetKey: string, fn: () => Promise<T>): Promise<ScheduledRun<T>> {
      if (busyKeys.has(targetKey)) {
        skippedByKey.set(targetKey, (skippedByKey.get(targetKey) ?? 0) + 1);
        skippedTotal++;
        return { ran: false, reason: 'overlap' };
      }
      busyKeys.add(targetKey);
      try {
        await acquire();
        try {
          return { ran: true, value: await fn() };
        } finally {
          release();
        }
      } finally {
        busyKeys.delete(targetKey);
        notifyIdle();
      }
    },
    busy: (targetKey) => busyKeys.has(targetKey),
    skipped: (targetKey) => (targetKey === undefined ? skippedTotal : (skippedByKey.get(targetKey) ?? 0)),
    stats: () => ({ concurrency, running, waiting: waiters.length, skipped: skippedTotal }),
    idle: () => (busyKeys.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
  };
}
