import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createQueue, FakeClock, type GetResult, type Queue } from '../../src/queue/index.js';
import { RecordingMetricsProvider } from './support/recording-metrics.js';

/** Takes every ready item with tryGet, without calling done. */
function takeAll<T>(queue: Queue<T>): T[] {
  const items: T[] = [];
  for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) items.push(got.item);
  return items;
}

/** Lets every queued promise continuation run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('work queue: dedup, single flight, FIFO', () => {
  it('hands items out in the order they were added', () => {
    const queue = createQueue<string>();
    for (const key of ['ns/c', 'ns/a', 'ns/b']) queue.add(key);
    expect(queue.len()).toBe(3);
    expect(takeAll(queue)).toEqual(['ns/c', 'ns/a', 'ns/b']);
    expect(queue.len()).toBe(0);
  });

  it('ignores adds of an item that is already waiting', () => {
    const queue = createQueue<string>();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    queue.add('a');
    expect(queue.len()).toBe(2);
    expect(takeAll(queue)).toEqual(['a', 'b']);
  });

  it('queues an item re-added while processing once, after done, behind items added meanwhile', () => {
    const queue = createQueue<string>();
    queue.add('a');
    expect(queue.tryGet()).toEqual({ item: 'a' });
    queue.add('a');
    queue.add('a');
    queue.add('b');
    expect(queue.len()).toBe(1);
    expect(takeAll(queue)).toEqual(['b']);
    queue.done('a');
    expect(queue.len()).toBe(1);
    expect(queue.tryGet()).toEqual({ item: 'a' });
    queue.done('a');
    queue.done('b');
    expect(queue.len()).toBe(0);
    expect(queue.tryGet()).toBeUndefined();
  });

  it('never hands out an item while it is being processed (client-go TestAddWhileProcessing)', () => {
    const queue = createQueue<number>();
    for (let i = 0; i < 10; i++) queue.add(i);
    const first = takeAll(queue);
    expect(first).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const item of first) queue.add(item);
    expect(queue.tryGet()).toBeUndefined();
    for (const item of first) queue.done(item);
    expect(takeAll(queue)).toEqual(first);
  });

  it('re-adding an item after done queues it again (client-go TestReinsert)', () => {
    const queue = createQueue<string>();
    queue.add('foo');
    expect(queue.tryGet()).toEqual({ item: 'foo' });
    queue.add('foo');
    queue.done('foo');
    expect(queue.tryGet()).toEqual({ item: 'foo' });
    queue.done('foo');
    expect(queue.len()).toBe(0);
  });

  it('treats done of an item that is not being processed as a no-op', () => {
    const queue = createQueue<string>();
    queue.done('never-added');
    queue.add('a');
    queue.done('a');
    expect(queue.len()).toBe(1);
    expect(takeAll(queue)).toEqual(['a']);
    queue.done('a');
    queue.done('a');
    expect(queue.len()).toBe(0);
    queue.add('a');
    expect(takeAll(queue)).toEqual(['a']);
  });

  it('keeps FIFO order through a deep backlog', () => {
    const queue = createQueue<number>();
    const n = 100_000;
    for (let i = 0; i < n; i++) queue.add(i);
    expect(queue.len()).toBe(n);
    const out: number[] = [];
    for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) {
      out.push(got.item);
      queue.done(got.item);
    }
    expect(out).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it('keeps dedup and single flight across many keys coming and going', () => {
    const queue = createQueue<string>();
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 5_000; i++) queue.add(`r${round}/k${i}`);
      for (let i = 0; i < 5_000; i += 2) queue.add(`r${round}/k${i}`);
      expect(queue.len()).toBe(5_000);
      const inFlight = takeAll(queue);
      expect(inFlight).toHaveLength(5_000);
      expect(inFlight[0]).toBe(`r${round}/k0`);
      expect(inFlight[4_999]).toBe(`r${round}/k4999`);
      queue.add(`r${round}/k7`);
      for (const item of inFlight) queue.done(item);
      expect(takeAll(queue)).toEqual([`r${round}/k7`]);
      queue.done(`r${round}/k7`);
    }
    queue.add('r0/k1');
    expect(takeAll(queue)).toEqual(['r0/k1']);
  });

  it('compares items as Set keys (the same object reference, or equal strings and numbers)', () => {
    const queue = createQueue<object | string | number>();
    const key = { namespace: 'ns', name: 'a' };
    queue.add(key);
    queue.add(key);
    queue.add({ namespace: 'ns', name: 'a' });
    queue.add(1);
    queue.add(1);
    queue.add('1');
    expect(queue.len()).toBe(4);
  });
});

describe('work queue: get', () => {
  it('resolves at once when an item is ready', async () => {
    const queue = createQueue<string>();
    queue.add('a');
    await expect(queue.get()).resolves.toEqual({ item: 'a', shutdown: false });
  });

  it('serves pending get calls in the order they were made, one item each', async () => {
    const queue = createQueue<string>();
    const order: string[] = [];
    const gets = [1, 2, 3].map((worker) =>
      queue.get().then((result) => {
        order.push(`${worker}:${result.item}`);
        return result;
      }),
    );
    queue.add('a');
    queue.add('b');
    expect(queue.len()).toBe(0);
    await settle();
    expect(order).toEqual(['1:a', '2:b']);
    queue.add('c');
    await expect(Promise.all(gets)).resolves.toEqual([
      { item: 'a', shutdown: false },
      { item: 'b', shutdown: false },
      { item: 'c', shutdown: false },
    ]);
  });

  it('takes the item out synchronously for a pending get; only the continuation is deferred', async () => {
    const queue = createQueue<string>();
    let result: GetResult<string> | undefined;
    const pending = queue.get().then((r) => {
      result = r;
    });
    queue.add('a');
    expect(queue.len()).toBe(0);
    expect(queue.tryGet()).toBeUndefined();
    expect(result).toBeUndefined();
    await pending;
    expect(result).toEqual({ item: 'a', shutdown: false });
    queue.add('a');
    expect(queue.len()).toBe(0);
    queue.done('a');
    expect(queue.len()).toBe(1);
  });

  it('serves a pending get when done re-queues a dirty item', async () => {
    const queue = createQueue<string>();
    queue.add('a');
    expect(queue.tryGet()).toEqual({ item: 'a' });
    const next = queue.get();
    queue.add('a');
    queue.done('a');
    await expect(next).resolves.toEqual({ item: 'a', shutdown: false });
  });
});

describe('work queue: shutdown', () => {
  it('ignores adds after shutdown, hands out queued items, then reports shutdown', async () => {
    const queue = createQueue<string>();
    queue.add('a');
    queue.add('b');
    queue.shutDown();
    expect(queue.shuttingDown()).toBe(true);
    queue.add('c');
    expect(queue.len()).toBe(2);
    await expect(queue.get()).resolves.toEqual({ item: 'a', shutdown: false });
    expect(queue.tryGet()).toEqual({ item: 'b' });
    await expect(queue.get()).resolves.toEqual({ item: undefined, shutdown: true });
    expect(queue.tryGet()).toBeUndefined();
  });

  it('ignores re-adds of an in-flight item after shutdown', () => {
    const queue = createQueue<string>();
    queue.add('a');
    expect(queue.tryGet()).toEqual({ item: 'a' });
    queue.shutDown();
    queue.add('a');
    queue.done('a');
    expect(queue.len()).toBe(0);
  });

  it('still re-queues an item marked dirty before shutdown when it is done', () => {
    const queue = createQueue<string>();
    queue.add('a');
    expect(queue.tryGet()).toEqual({ item: 'a' });
    queue.add('a');
    queue.shutDown();
    queue.done('a');
    expect(queue.len()).toBe(1);
    expect(queue.tryGet()).toEqual({ item: 'a' });
  });

  it('wakes every pending get with shutdown', async () => {
    const queue = createQueue<string>();
    const gets = [queue.get(), queue.get()];
    queue.shutDown();
    await expect(Promise.all(gets)).resolves.toEqual([
      { item: undefined, shutdown: true },
      { item: undefined, shutdown: true },
    ]);
  });

  it('shutDownWithDrain resolves once every in-flight item is done', async () => {
    const queue = createQueue<string>();
    queue.add('a');
    queue.add('b');
    queue.add('c');
    expect(takeAll(queue)).toEqual(['a', 'b', 'c']);
    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => {
      drained = true;
    });
    expect(queue.shuttingDown()).toBe(true);
    queue.done('a');
    await settle();
    expect(drained).toBe(false);
    queue.done('b');
    await settle();
    expect(drained).toBe(false);
    queue.done('c');
    await drain;
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain resolves at once when nothing is in flight', async () => {
    const queue = createQueue<string>();
    queue.add('queued-but-not-taken');
    await expect(queue.shutDownWithDrain()).resolves.toBeUndefined();
    expect(queue.len()).toBe(1);
  });

  it('shutDown after shutDownWithDrain stops the waiting (client-go TestForceQueueShutdownUsingShutDown)', async () => {
    const queue = createQueue<string>();
    queue.add('a');
    expect(queue.tryGet()).toEqual({ item: 'a' });
    let drained = false;
    const drain = queue.shutDownWithDrain().then(() => {
      drained = true;
    });
    await settle();
    expect(drained).toBe(false);
    queue.shutDown();
    await drain;
    expect(drained).toBe(true);
  });

  it('shutDownWithDrain with a dirty in-flight item resolves when it is done, leaving it queued', async () => {
    const queue = createQueue<string>();
    queue.add('a');
    expect(queue.tryGet()).toEqual({ item: 'a' });
    queue.add('a');
    const drain = queue.shutDownWithDrain();
    queue.done('a');
    await drain;
    expect(queue.len()).toBe(1);
    expect(queue.tryGet()).toEqual({ item: 'a' });
  });
});

/** client-go's queue, transcribed as plainly as possible, as the model for the property test. */
class ModelQueue {
  readonly fifo: number[] = [];
  readonly dirty = new Set<number>();
  readonly processing = new Set<number>();
  shuttingDown = false;
  adds = 0;

  add(item: number): void {
    if (this.shuttingDown || this.dirty.has(item)) return;
    this.adds++;
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.fifo.push(item);
  }
  get(): number | undefined {
    const item = this.fifo.shift();
    if (item === undefined) return undefined;
    this.processing.add(item);
    this.dirty.delete(item);
    return item;
  }
  done(item: number): void {
    if (!this.processing.delete(item)) return;
    if (this.dirty.has(item)) this.fifo.push(item);
  }
}

type Command = { op: 'add'; key: number } | { op: 'get' } | { op: 'done'; pick: number } | { op: 'shutdown' };

describe('work queue: model-based', () => {
  it('behaves exactly like client-go’s queue for any sequence of operations', () => {
    const command: fc.Arbitrary<Command> = fc.oneof(
      { weight: 6, arbitrary: fc.record({ op: fc.constant('add' as const), key: fc.integer({ min: 0, max: 12 }) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant('get' as const) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant('done' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('shutdown' as const) }) },
    );
    fc.assert(
      fc.property(fc.array(command, { maxLength: 200 }), (commands) => {
        const metrics = new RecordingMetricsProvider();
        const clock = new FakeClock();
        const queue = createQueue<number>({ name: 'q', clock, metricsProvider: metrics });
        const model = new ModelQueue();
        const recorded = metrics.of('q');
        for (const c of commands) {
          if (c.op === 'add') {
            queue.add(c.key);
            model.add(c.key);
          } else if (c.op === 'get') {
            expect(queue.tryGet()?.item).toBe(model.get());
          } else if (c.op === 'done') {
            // Mostly an item in flight, sometimes one that is not.
            const inFlight = [...model.processing];
            const item = c.pick % 4 === 3 || inFlight.length === 0 ? c.pick % 13 : inFlight[c.pick % inFlight.length]!;
            queue.done(item);
            model.done(item);
          } else {
            queue.shutDown();
            model.shuttingDown = true;
          }
          expect(queue.len()).toBe(model.fifo.length);
          expect(recorded.adds.value).toBe(model.adds);
          expect(recorded.depth.value).toBe(model.dirty.size);
        }
        expect(takeAll(queue)).toEqual(model.fifo);
      }),
      { numRuns: 300 },
    );
  });
});
