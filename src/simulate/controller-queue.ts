/**
 * The work queue of a simulated controller, as controller-runtime drives it: the priority queue (its default
 * since v0.23) or the classic client-go rate-limiting queue.
 *
 * Contract (controller-runtime's `handler.WithLowPriorityWhenUnchanged` and `reconcileHandler`):
 * - events carry a priority: initial-list and resync events (an unchanged resourceVersion) are added at
 *   `LOW_PRIORITY`, real changes at 0; the classic queue ignores priorities;
 * - a key is handed out with the priority it had in the queue, and every requeue of its reconcile (error,
 *   `Requeue`, `RequeueAfter`) keeps that priority;
 * - each queue uses controller-runtime's default rate limiter for it: per-item exponential (5 ms to 1000 s)
 *   for the priority queue, that plus the 10 qps bucket for the classic queue.
 */
import {
  type Clock,
  createPriorityQueue,
  createRateLimitingQueue,
  DEFAULT_MAX_BACKOFF_MS,
  defaultControllerRateLimiter,
  itemExponentialFailureRateLimiter,
  type MetricsProvider,
  type PriorityQueue,
  type RateLimiter,
  type RateLimitingQueue,
} from '../queue/index.js';

/** Which queue a controller runs. */
export type QueueKind = 'classic' | 'priority';
export const QUEUE_KINDS: readonly QueueKind[] = ['classic', 'priority'];

/** controller-runtime's `handler.LowPriority`: the priority of initial-list and resync events. */
export const LOW_PRIORITY = -100;
/** The priority of real changes (controller-runtime's default, `AddOpts.Priority` unset). */
export const NORMAL_PRIORITY = 0;

/** A key handed out to a worker, with the priority it had in the queue. */
export interface HandedOut {
  readonly key: number;
  readonly priority: number;
}

export interface ControllerQueue {
  readonly kind: QueueKind;
  /** An event for `key` at `priority`. */
  add(key: number, priority: number): void;
  /** Requeue with the rate limiter's delay (an error, `Requeue`). */
  addRateLimited(key: number, priority: number): void;
  /** Requeue after `ms` (`RequeueAfter`). */
  addAfter(key: number, ms: number, priority: number): void;
  /** The next ready key at once, or undefined. */
  tryGet(): HandedOut | undefined;
  /** The next ready key; undefined once the queue shuts down. */
  get(): Promise<HandedOut | undefined>;
  done(key: number): void;
  forget(key: number): void;
  numRequeues(key: number): number;
  shutDown(): void;
}

export interface ControllerQueueOptions {
  readonly name: string;
  readonly clock: Clock;
  /** Undefined: the queue records no metrics. */
  readonly metricsProvider: MetricsProvider | undefined;
  /** A custom per-item exponential limiter's first delay (see `ControllerSpec.backoffBaseMs`); missing: the default. */
  readonly backoffBaseMs?: number | undefined;
}

export function createControllerQueue(kind: QueueKind, options: ControllerQueueOptions): ControllerQueue {
  return kind === 'priority' ? priorityControllerQueue(options) : classicControllerQueue(options);
}

function classicControllerQueue(options: ControllerQueueOptions): ControllerQueue {
  const queue: RateLimitingQueue<number> = createRateLimitingQueue<number>(
    customRateLimiter(options) ?? defaultControllerRateLimiter<number>(options.clock),
    { name: options.name, clock: options.clock, metricsProvider: options.metricsProvider },
  );
  return {
    kind: 'classic',
    add: (key) => queue.add(key),
    addRateLimited: (key) => queue.addRateLimited(key),
    addAfter: (key, ms) => queue.addAfter(key, ms),
    tryGet() {
      const next = queue.tryGet();
      return next === undefined ? undefined : { key: next.item, priority: NORMAL_PRIORITY };
    },
    async get() {
      const next = await queue.get();
      return next.shutdown ? undefined : { key: next.item, priority: NORMAL_PRIORITY };
    },
    done: (key) => queue.done(key),
    forget: (key) => queue.forget(key),
    numRequeues: (key) => queue.numRequeues(key),
    shutDown: () => queue.shutDown(),
  };
}

function priorityControllerQueue(options: ControllerQueueOptions): ControllerQueue {
  const queue: PriorityQueue<number> = createPriorityQueue<number>({
    rateLimiter: customRateLimiter(options),
    name: options.name,
    clock: options.clock,
    metricsProvider: options.metricsProvider,
  });
  return {
    kind: 'priority',
    add: (key, priority) => queue.addWithOpts({ priority }, key),
    addRateLimited: (key, priority) => queue.addWithOpts({ rateLimited: true, priority }, key),
    addAfter: (key, ms, priority) => queue.addWithOpts({ after: ms, priority }, key),
    tryGet() {
      const next = queue.tryGet();
      return next === undefined ? undefined : { key: next.item, priority: next.priority };
    },
    async get() {
      const next = await queue.getWithPriority();
      return next.shutdown ? undefined : { key: next.item, priority: next.priority };
    },
    done: (key) => queue.done(key),
    forget: (key) => queue.forget(key),
    numRequeues: (key) => queue.numRequeues(key),
    shutDown: () => queue.shutDown(),
  };
}

/** The custom limiter `options` ask for (per-item exponential from their base to 1000 s), or undefined: the default. */
function customRateLimiter(options: ControllerQueueOptions): RateLimiter<number> | undefined {
  return options.backoffBaseMs === undefined
    ? undefined
    : itemExponentialFailureRateLimiter<number>(options.backoffBaseMs, DEFAULT_MAX_BACKOFF_MS);
}
