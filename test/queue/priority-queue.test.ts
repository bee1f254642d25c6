/**
 * controller-runtime's priority queue: the cases of its `priorityqueue_test.go` (commit 86a0d40e),
 * ported to the FakeClock (Go's `synctest` and time forwarder), plus this port's own cases and a
 * model-based property test against a plain transcription of the Go code.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createPriorityQueue,
  FakeClock,
  itemExponentialFailureRateLimiter,
  type PriorityQueue,
  type RateLimiter,
} from '../../src/queue/index.js';
import { RecordingPriorityMetricsProvider } from './support/recording-metrics.js';

/** Go's `newQueue()`: a queue named `test` with a recording provider with depth per priority. */
function newQueue(options: { clock?: FakeClock; rateLimiter?: RateLimiter<string> } = {}) {
  const clock = options.clock ?? new FakeClock(0);
  const metrics = new RecordingPriorityMetricsProvider();
  const q = createPriorityQueue<string>({
    name: 'test',
    clock,
    metricsProvider: metrics,
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
  });
  return {
    q,
    clock,
    depth: () => metrics.depthOf('test'),
    adds: () => metrics.of('test').adds.value,
    retries: () => metrics.of('test').retries.value,
  };
}

/** Lets every queued promise continuation run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/** Takes every item that can be handed out, without calling done. */
function takeAll<T>(queue: PriorityQueue<T>): T[] {
  const items: T[] = [];
  for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) items.push(got.item);
  return items;
}

/** A promise plus whether it has settled, as Go's tests watch a channel being closed. */
function watch<V>(promise: Promise<V>): { promise: Promise<V>; settled: () => boolean } {
  let settled = false;
  void promise.then(() => {
    settled = true;
  });
  return { promise, settled: () => settled };
}

/** A small seeded PRNG (mulberry32), for the Go tests that use math/rand. */
function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

describe('priority queue: Controllerworkqueue (Go Describe block)', () => {
  it('returns an item', () => {
    const { q, depth, adds, retries } = newQueue();
    q.addWithOpts({}, 'foo');
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 0 });
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(1);
    expect(retries()).toBe(0);
  });

  it('returns items in order', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({}, 'foo');
    q.addWithOpts({}, 'bar');
    expect(q.tryGet()?.item).toBe('foo');
    expect(q.tryGet()?.item).toBe('bar');
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(2);
  });

  it("doesn't return an item that is currently locked", () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({}, 'foo');
    expect(q.tryGet()?.item).toBe('foo');
    q.addWithOpts({}, 'foo');
    q.addWithOpts({}, 'bar');
    expect(q.tryGet()?.item).toBe('bar');
    expect(q.tryGet()).toBeUndefined();
    expect(depth()).toEqual({ 0: 1 });
    expect(adds()).toBe(3);
  });

  it('returns an item as soon as its unlocked', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({}, 'foo');
    expect(q.tryGet()?.item).toBe('foo');
    q.addWithOpts({}, 'foo');
    q.addWithOpts({}, 'bar');
    expect(q.tryGet()?.item).toBe('bar');
    q.addWithOpts({}, 'baz');
    q.done('foo');
    expect(q.tryGet()?.item).toBe('foo');
    expect(depth()).toEqual({ 0: 1 });
    expect(adds()).toBe(4);
  });

  it('de-duplicates items', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({}, 'foo');
    q.addWithOpts({}, 'foo');
    expect(q.len()).toBe(1);
    expect(depth()).toEqual({ 0: 1 });
    expect(adds()).toBe(1);
  });

  it('enqueues a locked item', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({}, 'foo');
    expect(q.len()).toBe(1);
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 0 });
    q.addWithOpts({}, 'foo');
    expect(q.len()).toBe(1);
    q.done('foo');
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 0 });
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(2);
  });

  it('retains the highest priority', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({ priority: 1 }, 'foo');
    q.addWithOpts({ priority: 2 }, 'foo');
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 2 });
    expect(q.len()).toBe(0);
    expect(depth()).toEqual({ 1: 0, 2: 0 });
    expect(adds()).toBe(1);
  });

  it('will not decrease the priority', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({ priority: 2 }, 'foo');
    q.addWithOpts({ priority: 1 }, 'foo');
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 2 });
    expect(q.len()).toBe(0);
    expect(depth()).toEqual({ 2: 0 });
    expect(adds()).toBe(1);
  });

  it('gets pushed to the front if the priority increases', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({}, 'foo');
    q.addWithOpts({}, 'bar');
    q.addWithOpts({}, 'baz');
    q.addWithOpts({ priority: 1 }, 'baz');
    expect(q.tryGet()).toEqual({ item: 'baz', priority: 1 });
    expect(q.len()).toBe(2);
    expect(depth()).toEqual({ 0: 2, 1: 0 });
    expect(adds()).toBe(3);
  });

  it('retains the lowest after duration', () => {
    const { q, depth, adds } = newQueue();
    q.addWithOpts({ after: 0 }, 'foo');
    q.addWithOpts({ after: 3_600_000 }, 'foo');
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 0 });
    expect(q.len()).toBe(0);
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(1);
  });

  it("doesn't include non-ready items in Len()", () => {
    const { q, depth } = newQueue();
    q.addWithOpts({ after: 60_000 }, 'foo');
    q.addWithOpts({}, 'baz');
    q.addWithOpts({ after: 60_000 }, 'bar');
    q.addWithOpts({}, 'bal');
    expect(q.len()).toBe(2);
    expect(depth()).toEqual({ 0: 2 });
  });

  it('Get from priority queue might get stuck when the priority queue is shut down (issue 3239)', async () => {
    const { q } = newQueue();
    q.add('baz');
    q.shutDown();
    q.addWithOpts({ after: 1000 }, 'foo');
    await expect(q.getWithPriority()).resolves.toEqual({ item: undefined, priority: 0, shutdown: true });
    await expect(q.getWithPriority()).resolves.toEqual({ item: undefined, priority: 0, shutdown: true });
  });

  it('returns many items', async () => {
    const { q, clock } = newQueue();
    const random = prng(42);
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 1000; i++) {
        const rn = random(100);
        if (rn < 10) q.addWithOpts({ after: rn }, `foo${i}`);
        else q.addWithOpts({ priority: rn }, `foo${i}`);
      }
      const workers = Array.from({ length: 100 }, async () => {
        for (let j = 0; j < 10; j++) {
          const got = await q.getWithPriority();
          expect(got.shutdown).toBe(false);
          q.done(got.item!);
        }
      });
      for (let ms = 0; ms < 10; ms++) {
        await settle();
        clock.step(1);
      }
      await Promise.all(workers);
      expect(q.len()).toBe(0);
      expect(q.waitingLen()).toBe(0);
    }
  });

  it('updates metrics correctly for an item that gets initially added with after and then without', () => {
    const { q, depth } = newQueue();
    q.addWithOpts({ after: 3_600_000 }, 'foo');
    expect(q.len()).toBe(0);
    expect(depth()).toEqual({});
    q.addWithOpts({}, 'foo');
    expect(q.len()).toBe(1);
    expect(depth()).toEqual({ 0: 1 });
    expect(q.tryGet()?.item).toBe('foo');
    expect(q.len()).toBe(0);
    expect(depth()).toEqual({ 0: 0 });
  });

  it('updates metrics correctly when an item with after is re-added with higher priority and no after', () => {
    const { q, depth } = newQueue();
    q.addWithOpts({ after: 3_600_000, priority: 0 }, 'foo');
    expect(q.len()).toBe(0);
    expect(depth()).toEqual({});
    q.addWithOpts({ priority: 1 }, 'foo');
    expect(q.len()).toBe(1);
    expect(depth()).toEqual({ 1: 1 });
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 1 });
    expect(q.len()).toBe(0);
    for (const value of Object.values(depth())) expect(value).toBe(0);
  });

  it('follows FIFO order in the new priority queue when item priority changes', () => {
    const { q } = newQueue();
    q.addWithOpts({ priority: 0 }, 'foo');
    q.addWithOpts({ priority: 1 }, 'bar');
    q.addWithOpts({ priority: 1 }, 'foo');
    expect(q.len()).toBe(2);
    expect(q.tryGet()).toEqual({ item: 'bar', priority: 1 });
    expect(q.len()).toBe(1);
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 1 });
    expect(q.len()).toBe(0);
  });
});

describe('priority queue: the Go test functions', () => {
  it.each([-1000, 0, 1000])(
    'TestHighPriorityItemsAreReturnedBeforeLowPriorityItemMultipleTimes, after=%d ms',
    (after) => {
      const { q, clock, depth, adds, retries } = newQueue({ clock: new FakeClock(1_700_000_000_000) });
      const itemsPerPriority = 1000;
      const levels = [
        ['high', 10],
        ['upperMiddle', 5],
        ['middle', 0],
        ['lowMiddle', -5],
        ['low', -10],
      ] as const;
      for (let i = 0; i < itemsPerPriority; i++) {
        for (const [name, priority] of levels) q.addWithOpts({ priority, after }, `${name}-${i}`);
      }
      if (after > 0) clock.step(after);
      for (const [name, priority] of levels) {
        for (let i = 0; i < itemsPerPriority; i++) expect(q.tryGet()).toEqual({ item: `${name}-${i}`, priority });
      }
      expect(depth()).toEqual({ [-10]: 0, [-5]: 0, 0: 0, 5: 0, 10: 0 });
      expect(adds()).toBe(itemsPerPriority * 5);
      expect(retries()).toBe(after > 0 ? itemsPerPriority * 5 : 0);
    },
  );

  it('TestItemIsOnlyReturnedAfterAfterHasPassed', async () => {
    const start = 1_700_000_000_000;
    const { q, clock, depth, adds, retries } = newQueue({ clock: new FakeClock(start) });
    const retrieved = watch(q.getWithPriority());
    q.addWithOpts({ after: 1000 }, 'foo');
    expect(clock.nextTimerAt()).toBe(start + 500); // the unfinished-work refresher
    clock.step(500);
    expect(clock.nextTimerAt()).toBe(start + 1000); // the readiness timer: one second
    await settle();
    expect(retrieved.settled()).toBe(false);
    clock.step(500);
    await settle();
    expect(retrieved.settled()).toBe(true);
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(1);
    expect(retries()).toBe(1);
  });

  it('TestHighPriorityItemThatBecameReadyIsReturnedBeforeLowPriorityItem', () => {
    const { q, clock, depth, adds, retries } = newQueue();
    q.addWithOpts({ after: 0, priority: -100 }, 'foo');
    q.addWithOpts({ after: 1000, priority: 0 }, 'prio');
    clock.step(1000);
    expect(q.tryGet()).toEqual({ item: 'prio', priority: 0 });
    expect(depth()).toEqual({ [-100]: 1, 0: 0 });
    expect(adds()).toBe(2);
    expect(retries()).toBe(1);
  });

  it('TestItemIsReturnedAsSoonAsPossible', async () => {
    const { q, depth, adds } = newQueue();
    const retrieved = watch(q.getWithPriority());
    await settle();
    q.addWithOpts({}, 'foo');
    await settle();
    expect(retrieved.settled()).toBe(true);
    await expect(retrieved.promise).resolves.toEqual({ item: 'foo', priority: 0, shutdown: false });
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(1);
  });

  it('TestWaitingItemIsReturnedRightAfterReadWithoutAfter', async () => {
    const { q, depth, adds } = newQueue();
    const retrieved = watch(q.getWithPriority());
    await settle();
    q.addWithOpts({ after: 60_000 }, 'foo');
    await settle();
    expect(retrieved.settled()).toBe(false);
    q.addWithOpts({}, 'foo');
    await settle();
    expect(retrieved.settled()).toBe(true);
    await expect(retrieved.promise).resolves.toEqual({ item: 'foo', priority: 0, shutdown: false });
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(1);
  });

  it('TestMultipleItemsWithAfterAreReturnedInCorrectOrder', async () => {
    const { q, clock, depth, adds } = newQueue();
    const order: string[] = [];
    const consumer = (async () => {
      order.push((await q.getWithPriority()).item!);
      order.push((await q.getWithPriority()).item!);
    })();
    q.addWithOpts({ after: 1000 }, 'foo');
    q.addWithOpts({ after: 200 }, 'bar');
    await settle();
    expect(order).toEqual([]);
    clock.step(1000);
    await consumer;
    expect(order).toEqual(['bar', 'foo']);
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(2);
  });

  it('TestGetFromPriorityQueueIsUnblockedOnShutdown', async () => {
    const { q } = newQueue();
    const get = watch(q.getWithPriority());
    await settle();
    expect(get.settled()).toBe(false);
    q.shutDown();
    await expect(get.promise).resolves.toEqual({ item: undefined, priority: 0, shutdown: true });
  });

  it('TestItemsAreInludedInLenAndMetricsOnceTheyAreReady', () => {
    const { q, clock, depth } = newQueue();
    for (let round = 0; round < 2; round++) {
      q.addWithOpts({ after: 500 }, 'foo');
      q.addWithOpts({}, 'baz');
      q.addWithOpts({ after: 500 }, 'bar');
      q.addWithOpts({}, 'bal');
      expect(q.len()).toBe(2);
      expect(depth()).toEqual({ 0: 2 });
      clock.step(1000);
      expect(q.len()).toBe(4);
      expect(depth()).toEqual({ 0: 4 });
      if (round === 1) break;
      for (let i = 0; i < 4; i++) q.done(q.tryGet()!.item);
      expect(q.len()).toBe(0);
      expect(depth()).toEqual({ 0: 0 });
    }
  });

  it('TestMetricsAreUpdatedForItemWhoseRequeueAfterExpiredThatGetsAddedAgainWithoutRequeueAfter', () => {
    const { q, clock, depth } = newQueue();
    q.addWithOpts({ after: 50 }, 'foo');
    clock.step(50);
    expect(q.len()).toBe(1);
    expect(depth()).toEqual({ 0: 1 });
    q.addWithOpts({}, 'foo');
    expect(q.len()).toBe(1);
    expect(depth()).toEqual({ 0: 1 });
    expect(q.tryGet()?.item).toBe('foo');
    expect(q.len()).toBe(0);
    expect(depth()).toEqual({ 0: 0 });
  });

  it('TestWhenAddingMultipleItemsWithRatelimitTrueTheyDontAffectEachOther', async () => {
    const rateLimiter = itemExponentialFailureRateLimiter<string>(5, 1_000_000);
    const { q, clock, depth, adds, retries } = newQueue({ rateLimiter });
    const first = watch(q.getWithPriority());
    const second = watch(first.promise.then(() => q.getWithPriority()));
    // After 7 calls, the next when('bar') returns 640 ms.
    for (let i = 0; i < 7; i++) rateLimiter.when('bar');
    q.addWithOpts({ rateLimited: true }, 'foo', 'bar');
    await settle();
    expect(first.settled()).toBe(false);
    clock.step(5);
    await settle();
    expect(first.settled()).toBe(true);
    expect(second.settled()).toBe(false);
    await expect(first.promise).resolves.toMatchObject({ item: 'foo' });
    clock.step(635);
    await settle();
    expect(second.settled()).toBe(true);
    await expect(second.promise).resolves.toMatchObject({ item: 'bar' });
    expect(depth()).toEqual({ 0: 0 });
    expect(adds()).toBe(2);
    expect(retries()).toBe(2);
  });

  it('TestPriorityQueueDoesNotDeadlockOnShutdownWhileHandingOutItems', async () => {
    for (let round = 0; round < 5; round++) {
      const q = createPriorityQueue<string>({ name: 'test', clock: new FakeClock() });
      const random = prng(round);
      const workers = Array.from({ length: 20 }, async () => {
        for (;;) {
          q.addWithOpts({ priority: random(100) }, String(random(1000)));
          if ((await q.getWithPriority()).shutdown) return;
          await new Promise((resolve) => setImmediate(resolve));
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 1));
      q.shutDown();
      await Promise.all(workers);
    }
  });
});

describe('priority queue: readiness and ordering', () => {
  it('an item readied by an add without delay keeps its added counter', () => {
    const { q } = newQueue();
    q.addAfter('a', 1000);
    q.add('b');
    q.add('a');
    expect(takeAll(q)).toEqual(['a', 'b']);
  });

  it('an item whose ready time passes is ordered by when it became ready', () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 100);
    q.add('b');
    clock.step(100);
    q.add('c');
    expect(takeAll(q)).toEqual(['b', 'a', 'c']);
  });

  it('items due at one time become ready by priority, then by when they were added', () => {
    const { q, clock } = newQueue();
    q.addWithOpts({ after: 100, priority: 1 }, 'low-1');
    q.addWithOpts({ after: 100, priority: 2 }, 'high');
    q.addWithOpts({ after: 50, priority: 0 }, 'early');
    q.addWithOpts({ after: 100, priority: 1 }, 'low-2');
    clock.step(100);
    expect(takeAll(q)).toEqual(['high', 'low-1', 'low-2', 'early']);
  });

  it('a priority raise while waiting changes depth only once the item is ready, at the new priority', () => {
    const { q, clock, depth, adds } = newQueue();
    q.addWithOpts({ after: 100, priority: 1 }, 'a');
    q.addWithOpts({ after: 200, priority: 3 }, 'a');
    expect(depth()).toEqual({});
    expect(q.waitingLen()).toBe(1);
    clock.step(100);
    expect(depth()).toEqual({ 3: 1 });
    expect(adds()).toBe(1);
    expect(q.tryGet()).toEqual({ item: 'a', priority: 3 });
  });

  it('a re-add with a later delay keeps the earlier ready time', () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 100);
    q.addAfter('a', 500);
    clock.step(100);
    expect(q.len()).toBe(1);
    expect(q.waitingLen()).toBe(0);
  });

  it('a re-add with a delay of an item already ready keeps it ready, and counts a retry', () => {
    const { q, adds, retries } = newQueue();
    q.add('a');
    q.addAfter('a', 100);
    expect(q.len()).toBe(1);
    expect(q.waitingLen()).toBe(0);
    expect(adds()).toBe(1);
    expect(retries()).toBe(1);
  });

  it('a priority raise of an item re-added while being processed moves its depth and applies after done', () => {
    const { q, depth } = newQueue();
    q.add('foo');
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 0 });
    q.add('foo');
    q.addWithOpts({ priority: 3 }, 'foo');
    q.add('bar');
    expect(depth()).toEqual({ 0: 1, 3: 1 });
    expect(q.len()).toBe(2);
    expect(q.tryGet()?.item).toBe('bar');
    q.done('foo');
    expect(q.tryGet()).toEqual({ item: 'foo', priority: 3 });
    expect(depth()).toEqual({ 0: 0, 3: 0 });
  });

  it('an item whose ready time passes while it is being processed waits for done', () => {
    const { q, clock } = newQueue();
    q.add('a');
    expect(q.tryGet()?.item).toBe('a');
    q.addAfter('a', 100);
    clock.step(100);
    expect(q.len()).toBe(1);
    expect(q.tryGet()).toBeUndefined();
    q.done('a');
    expect(q.tryGet()?.item).toBe('a');
  });

  it('serves a pending get after the whole addWithOpts call, with the best item of it', async () => {
    const { q } = newQueue();
    q.addWithOpts({ after: 1000, priority: 5 }, 'w');
    const first = q.getWithPriority();
    q.addWithOpts({}, 'a', 'w');
    await expect(first).resolves.toEqual({ item: 'w', priority: 5, shutdown: false });
    expect(q.tryGet()?.item).toBe('a');
    const second = q.getWithPriority();
    q.add('b');
    q.addWithOpts({ priority: 9 }, 'c');
    await expect(second).resolves.toEqual({ item: 'b', priority: 0, shutdown: false });
  });

  it('serves pending gets oldest first; get resolves without the priority', async () => {
    const { q } = newQueue();
    const gets = [q.get(), q.getWithPriority(), q.get()];
    q.addWithOpts({ priority: 2 }, 'a', 'b', 'c');
    await expect(Promise.all(gets)).resolves.toEqual([
      { item: 'a', shutdown: false },
      { item: 'b', priority: 2, shutdown: false },
      { item: 'c', shutdown: false },
    ]);
  });

  it('keeps priority, then FIFO, order through a 100,000-key backlog', () => {
    const q = createPriorityQueue<number>();
    const n = 100_000;
    for (let i = 0; i < n; i++) q.addWithOpts({ priority: i % 4 }, i);
    expect(q.len()).toBe(n);
    const out: number[] = [];
    for (let got = q.tryGet(); got !== undefined; got = q.tryGet()) {
      out.push(got.item);
      q.done(got.item);
    }
    const expected = [3, 2, 1, 0].flatMap((p) => Array.from({ length: n / 4 }, (_, k) => 4 * k + p));
    expect(out).toEqual(expected);
  });

  it('moves a 100,000-item waiting backlog to ready in ready-time order', () => {
    const clock = new FakeClock(0);
    const q = createPriorityQueue<number>({ clock });
    const n = 100_000;
    for (let i = 0; i < n; i++) q.addAfter(i, 1 + ((i * 7919) % 1000));
    expect(q.waitingLen()).toBe(n);
    clock.step(1000);
    expect(q.len()).toBe(n);
    const readyAt = (i: number): number => 1 + ((i * 7919) % 1000);
    const out = takeAll(q);
    const expected = Array.from({ length: n }, (_, i) => i).sort((a, b) => readyAt(a) - readyAt(b) || a - b);
    expect(out).toEqual(expected);
  });

  it('keeps dedup and single flight across many keys coming and going (idle records swept)', () => {
    const q = createPriorityQueue<string>();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 5_000; i++) q.add(`r${round}/k${i}`);
      for (let i = 0; i < 5_000; i += 2) q.addWithOpts({ priority: 1 }, `r${round}/k${i}`);
      expect(q.len()).toBe(5_000);
      const inFlight = takeAll(q);
      expect(inFlight).toHaveLength(5_000);
      expect(inFlight[0]).toBe(`r${round}/k0`);
      expect(inFlight[2_500]).toBe(`r${round}/k1`);
      q.add(`r${round}/k7`);
      for (const item of inFlight) q.done(item);
      expect(takeAll(q)).toEqual([`r${round}/k7`]);
      q.done(`r${round}/k7`);
    }
    q.add('r0/k1');
    expect(takeAll(q)).toEqual(['r0/k1']);
  });

  it('rejects a priority that is not a safe integer', () => {
    const { q } = newQueue();
    expect(() => q.addWithOpts({ priority: 1.5 }, 'a')).toThrow(RangeError);
    expect(() => q.addWithOpts({ priority: Number.NaN }, 'a')).toThrow(RangeError);
    expect(q.len()).toBe(0);
  });
});

describe('priority queue: rate limiting', () => {
  it('uses controller-runtime’s default limiter: per-item exponential from 5 ms, no bucket', () => {
    const { q, clock } = newQueue();
    for (let i = 0; i < 200; i++) q.addRateLimited(`k${i}`);
    expect(clock.nextTimerAt()).toBe(5);
    expect(q.numRequeues('k0')).toBe(1);
    clock.step(5);
    expect(q.len()).toBe(200);
    const taken = takeAll(q);
    q.addRateLimited('k0');
    q.done('k0');
    expect(clock.nextTimerAt()).toBe(15);
    expect(q.numRequeues('k0')).toBe(2);
    q.forget('k0');
    expect(q.numRequeues('k0')).toBe(0);
    expect(taken).toHaveLength(200);
  });

  it('takes the shorter of after and the limiter’s delay, and the limiter’s when after is 0', () => {
    const limiter: RateLimiter<string> = { when: () => 300, forget() {}, numRequeues: () => 0 };
    const { q, clock, retries } = newQueue({ rateLimiter: limiter });
    q.addWithOpts({ rateLimited: true, after: 1000 }, 'a');
    q.addWithOpts({ rateLimited: true, after: 100 }, 'b');
    q.addWithOpts({ rateLimited: true }, 'c');
    expect(retries()).toBe(3);
    clock.step(100);
    expect(takeAll(q)).toEqual(['b']);
    clock.step(200);
    expect(takeAll(q)).toEqual(['a', 'c']);
  });

  it('a negative after wins over the limiter (the item is ready), which still counts the failure', () => {
    const rateLimiter = itemExponentialFailureRateLimiter<string>(5, 1_000_000);
    const { q, retries, adds } = newQueue({ rateLimiter });
    q.addWithOpts({ rateLimited: true, after: -1 }, 'a');
    expect(q.len()).toBe(1);
    expect(q.numRequeues('a')).toBe(1);
    expect(retries()).toBe(0);
    expect(adds()).toBe(1);
  });

  it('a limiter delay of 0 makes the item ready without a retry', () => {
    const limiter: RateLimiter<string> = { when: () => 0, forget() {}, numRequeues: () => 0 };
    const { q, retries } = newQueue({ rateLimiter: limiter });
    q.addRateLimited('a');
    expect(q.len()).toBe(1);
    expect(retries()).toBe(0);
  });
});

describe('priority queue: shutdown', () => {
  it('reports shutdown at once even with ready items, ignores adds, keeps len', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    q.addAfter('w', 100);
    q.shutDown();
    expect(q.shuttingDown()).toBe(true);
    q.add('b');
    q.addRateLimited('c');
    expect(q.numRequeues('c')).toBe(0);
    expect(q.tryGet()).toBeUndefined();
    await expect(q.get()).resolves.toEqual({ item: undefined, shutdown: true });
    expect(q.len()).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
    clock.step(1000);
    expect(q.len()).toBe(1);
    expect(q.waitingLen()).toBe(1);
  });

  it('shutDownWithDrain is shutDown: resolves at once with items in flight; a second shutDown is harmless', async () => {
    const { q } = newQueue();
    q.add('a');
    expect(q.tryGet()?.item).toBe('a');
    await expect(q.shutDownWithDrain()).resolves.toBeUndefined();
    q.shutDown();
    q.done('a');
    expect(q.shuttingDown()).toBe(true);
  });

  it('wakes every pending get with shutdown', async () => {
    const { q } = newQueue();
    const gets = [q.get(), q.getWithPriority()];
    q.shutDown();
    await expect(Promise.all(gets)).resolves.toEqual([
      { item: undefined, shutdown: true },
      { item: undefined, priority: 0, shutdown: true },
    ]);
  });
});

/**
 * controller-runtime's priority queue transcribed as plainly as possible (Go's `lockedAddWithOpts`,
 * `handleWaitingItems`, `handleReadyItems` with one waiter, `Done`, and `defaultQueueMetrics`), with
 * sorted arrays for its B-trees and an ideal waiting-items goroutine that wakes at each ready time.
 */
interface ModelItem {
  key: number;
  addedCounter: number;
  priority: number;
  readyAt: number | undefined;
}

function lessReady(a: ModelItem, b: ModelItem): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.addedCounter - b.addedCounter;
}

function lessWaiting(a: ModelItem, b: ModelItem): number {
  if (a.readyAt !== b.readyAt) return a.readyAt! - b.readyAt!;
  return lessReady(a, b);
}

const seconds = (from: number, to: number): number => Math.round((to - from) * 1e6) / 1e9;

class ModelPriorityQueue {
  items = new Map<number, ModelItem>();
  locked = new Set<number>();
  addedCounter = 0;
  now = 0;
  shutdown = false;
  failures = new Map<number, number>();
  // metrics
  adds = 0;
  retries = 0;
  depth = new Map<number, number>();
  addTimes = new Map<number, number>();
  processingStartTimes = new Map<number, number>();
  latency: number[] = [];
  workDuration: number[] = [];
  unfinished = 0;
  longest = 0;
  nextRefresh = 500;

  private metricsAdd(key: number, priority: number): void {
    this.adds++;
    this.depth.set(priority, (this.depth.get(priority) ?? 0) + 1);
    if (!this.addTimes.has(key)) this.addTimes.set(key, this.now);
  }

  private when(key: number): number {
    const exp = this.failures.get(key) ?? 0;
    this.failures.set(key, exp + 1);
    return Math.min(5 * 2 ** exp, 1_000_000);
  }

  addWithOpts(o: { after?: number; rateLimited?: boolean; priority?: number }, keys: number[]): void {
    if (this.shutdown || keys.length === 0) return;
    for (const key of keys) {
      let after = o.after ?? 0;
      if (o.rateLimited) {
        const rlAfter = this.when(key);
        if (after === 0 || rlAfter < after) after = rlAfter;
      }
      let readyAt: number | undefined;
      if (after > 0) {
        readyAt = this.now + after;
        this.retries++;
      }
      const existing = this.items.get(key);
      if (existing === undefined) {
        const item = { key, addedCounter: this.addedCounter++, priority: o.priority ?? 0, readyAt };
        this.items.set(key, item);
        if (readyAt === undefined) this.metricsAdd(key, item.priority);
        continue;
      }
      if (existing.readyAt === undefined) readyAt = undefined;
      else if (readyAt !== undefined && existing.readyAt < readyAt) readyAt = existing.readyAt;
      let priority = existing.priority;
      let addedCounter = existing.addedCounter;
      const newPriority = o.priority ?? 0;
      if (newPriority > existing.priority) {
        if (existing.readyAt === undefined) {
          this.depth.set(existing.priority, this.depth.get(existing.priority)! - 1);
          this.depth.set(newPriority, (this.depth.get(newPriority) ?? 0) + 1);
        }
        priority = newPriority;
        addedCounter = this.addedCounter++;
      }
      if (readyAt === undefined && existing.readyAt !== undefined) this.metricsAdd(key, priority);
      existing.readyAt = readyAt;
      existing.priority = priority;
      existing.addedCounter = addedCounter;
    }
  }

  /** Advances to `target`, waking at each ready time and each unfinished-work refresh on the way. */
  step(target: number): void {
    for (;;) {
      const waiting = [...this.items.values()].filter((i) => i.readyAt !== undefined).sort(lessWaiting);
      const nextReady = this.shutdown ? Number.POSITIVE_INFINITY : (waiting[0]?.readyAt ?? Number.POSITIVE_INFINITY);
      const refresh = this.shutdown ? Number.POSITIVE_INFINITY : this.nextRefresh;
      const next = Math.min(nextReady, refresh);
      if (next > target) break;
      this.now = next;
      if (refresh === next) {
        this.unfinished = 0;
        this.longest = 0;
        for (const t of this.processingStartTimes.values()) {
          const age = seconds(t, this.now);
          this.unfinished += age;
          if (age > this.longest) this.longest = age;
        }
        this.nextRefresh += 500;
      }
      for (const item of waiting) {
        if (this.shutdown || item.readyAt! - this.now > 0) break;
        item.readyAt = undefined;
        item.addedCounter = this.addedCounter++;
        this.metricsAdd(item.key, item.priority);
      }
    }
    this.now = target;
  }

  get(): { item: number; priority: number } | undefined {
    if (this.shutdown) return undefined;
    const ready = [...this.items.values()].filter((i) => i.readyAt === undefined).sort(lessReady);
    for (const item of ready) {
      if (this.locked.has(item.key)) continue;
      this.depth.set(item.priority, this.depth.get(item.priority)! - 1);
      this.processingStartTimes.set(item.key, this.now);
      const added = this.addTimes.get(item.key);
      if (added !== undefined) {
        this.latency.push(seconds(added, this.now));
        this.addTimes.delete(item.key);
      }
      this.locked.add(item.key);
      this.items.delete(item.key);
      return { item: item.key, priority: item.priority };
    }
    return undefined;
  }

  done(key: number): void {
    this.locked.delete(key);
    const start = this.processingStartTimes.get(key);
    if (start !== undefined) {
      this.workDuration.push(seconds(start, this.now));
      this.processingStartTimes.delete(key);
    }
  }

  len(): number {
    return [...this.items.values()].filter((i) => i.readyAt === undefined).length;
  }
}

type Command =
  | { op: 'add'; keys: number[]; priority: number | undefined; after: number | undefined; rateLimited: boolean }
  | { op: 'get' }
  | { op: 'done'; pick: number }
  | { op: 'step'; ms: number }
  | { op: 'forget'; key: number }
  | { op: 'shutdown' };

describe('priority queue: model-based', () => {
  it('behaves exactly like controller-runtime’s priority queue for any sequence of operations', () => {
    const key = fc.integer({ min: 0, max: 9 });
    const command: fc.Arbitrary<Command> = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          op: fc.constant('add' as const),
          keys: fc.array(key, { minLength: 1, maxLength: 3 }),
          priority: fc.option(fc.integer({ min: -2, max: 3 }), { nil: undefined }),
          after: fc.option(fc.constantFrom(-5, 0, 1, 5, 10, 100, 700), { nil: undefined }),
          rateLimited: fc.boolean(),
        }),
      },
      { weight: 5, arbitrary: fc.record({ op: fc.constant('get' as const) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant('done' as const), pick: fc.nat() }) },
      {
        weight: 3,
        arbitrary: fc.record({ op: fc.constant('step' as const), ms: fc.constantFrom(0, 1, 4, 5, 10, 95, 250, 600) }),
      },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('forget' as const), key }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('shutdown' as const) }) },
    );
    fc.assert(
      fc.property(fc.array(command, { maxLength: 150 }), (commands) => {
        const clock = new FakeClock(0);
        const metrics = new RecordingPriorityMetricsProvider();
        const q = createPriorityQueue<number>({ name: 'q', clock, metricsProvider: metrics });
        const m = metrics.of('q');
        const model = new ModelPriorityQueue();
        for (const c of commands) {
          if (c.op === 'add') {
            const opts = {
              ...(c.priority === undefined ? {} : { priority: c.priority }),
              ...(c.after === undefined ? {} : { after: c.after }),
              rateLimited: c.rateLimited,
            };
            q.addWithOpts(opts, ...c.keys);
            model.addWithOpts(opts, c.keys);
          } else if (c.op === 'get') {
            expect(q.tryGet()).toEqual(model.get());
          } else if (c.op === 'done') {
            const inFlight = [...model.locked];
            const item = c.pick % 4 === 3 || inFlight.length === 0 ? c.pick % 10 : inFlight[c.pick % inFlight.length]!;
            q.done(item);
            model.done(item);
          } else if (c.op === 'step') {
            clock.step(c.ms);
            model.step(model.now + c.ms);
          } else if (c.op === 'forget') {
            q.forget(c.key);
            model.failures.delete(c.key);
          } else {
            q.shutDown();
            model.shutdown = true;
          }
          expect(q.len()).toBe(model.len());
          expect(q.waitingLen()).toBe(model.items.size - model.len());
          expect(m.adds.value).toBe(model.adds);
          expect(m.retries.value).toBe(model.retries);
          expect(metrics.depthOf('q')).toEqual(Object.fromEntries(model.depth));
          expect(m.latency.observations).toEqual(model.latency);
          expect(m.workDuration.observations).toEqual(model.workDuration);
          expect(m.unfinished.value).toBeCloseTo(model.unfinished, 9);
          expect(m.longest.value).toBe(model.longest);
        }
        if (!model.shutdown) {
          for (const item of [...model.locked]) {
            q.done(item);
            model.done(item);
          }
          const drained: unknown[] = [];
          for (let got = q.tryGet(); got !== undefined; got = q.tryGet()) drained.push(got);
          const expected: unknown[] = [];
          for (let got = model.get(); got !== undefined; got = model.get()) expected.push(got);
          expect(drained).toEqual(expected);
        }
      }),
      { numRuns: 400 },
    );
  });
});
