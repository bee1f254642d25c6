/**
 * The rate-limiting queue: a delaying queue whose requeue delay comes from a rate limiter
 * (client-go `TypedRateLimitingInterface`). The usual worker loop:
 * `get` → sync → on error `addRateLimited(item)`, on success `forget(item)` → always `done(item)`.
 */
import { type DelayingQueue, type DelayingQueueOptions, DelayingWorkQueue } from './delaying-queue.js';
import type { RateLimiter } from './rate-limiters.js';

export type RateLimitingQueueOptions = DelayingQueueOptions;

export interface RateLimitingQueue<T> extends DelayingQueue<T> {
  /** `addAfter(item, rateLimiter.when(item))`: counts a failure of `item` even after shutdown, as client-go. */
  addRateLimited(item: T): void;
  /**
   * Stops tracking `item`'s failures (after a success, or when giving up). Only clears the rate
   * limiter: `done` is still needed.
   */
  forget(item: T): void;
  /** How many times `item` has been requeued through the rate limiter since it was last forgotten. */
  numRequeues(item: T): number;
}

export class RateLimitingWorkQueue<T> extends DelayingWorkQueue<T> implements RateLimitingQueue<T> {
  constructor(
    private readonly rateLimiter: RateLimiter<T>,
    options?: RateLimitingQueueOptions,
  ) {
    super(options);
  }

  addRateLimited(item: T): void {
    this.addAfter(item, this.rateLimiter.when(item));
  }

  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}

/**
 * A rate-limiting queue (client-go `NewTypedRateLimitingQueueWithConfig`). Remember to `forget`,
 * or failures are tracked forever.
 */
export function createRateLimitingQueue<T>(
  rateLimiter: RateLimiter<T>,
  options?: RateLimitingQueueOptions,
): RateLimitingQueue<T> {
  return new RateLimitingWorkQueue<T>(rateLimiter, options);
}
