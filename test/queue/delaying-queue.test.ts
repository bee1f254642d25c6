import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createDelayingQueue, FakeClock, type GetResult, type Queue } from '../../src/queue/index.js';
import { RecordingMetricsProvider } from './support/recording-metrics.js';

function takeAll<T>(queue: Queue<T>): T[] {
  const items: T[] = [];
  for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) items.push(got.item);
  return items;
}

describe('delaying queue', () => {
  it('adds an item once its delay has passed on the queue clock (client-go TestSimpleQueue)', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.addAfter('foo', 50);
    expect(queue.len()).toBe(0);
    expect(queue.waitingLen()).toBe(1);
    clock.step(49);
    expect(queue.len()).toBe(0);
    clock.step(1);
    expect(queue.len()).toBe(1);
    expect(queue.waitingLen()).toBe(0);
    expect(queue.tryGet()).toEqual({ item: 'foo' });
    queue.done('foo');
    clock.step(10_000);
    expect(queue.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('adds at once for a delay <= 0 (and NaN)', () => {
    const queue = createDelayingQueue<string>({ clock: new FakeClock() });
    queue.addAfter('zero', 0);
    queue.addAfter('negative', -100);
    queue.addAfter('nan', Number.NaN);
    expect(queue.waitingLen()).toBe(0);
    expect(takeAll(queue)).toEqual(['zero', 'negative', 'nan']);
  });

  it('keeps the earliest ready time of a duplicate addAfter, whichever comes first (client-go TestDeduping)', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.addAfter('first', 50);
    queue.addAfter('first', 70);
    expect(queue.waitingLen()).toBe(1);
    clock.step(60);
    expect(takeAll(queue)).toEqual(['first']);
    queue.done('first');
    clock.step(20);
    expect(queue.len()).toBe(0);

    queue.addAfter('first', 70);
    queue.addAfter('first', 50);
    expect(queue.waitingLen()).toBe(1);
    clock.step(49);
    expect(queue.len()).toBe(0);
    clock.step(1);
    expect(takeAll(queue)).toEqual(['first']);
    queue.done('first');
    clock.step(100);
    expect(queue.len()).toBe(0);
  });

  it('hands out delayed items in ready-time order (client-go TestCopyShifting)', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.addAfter('first', 1000);
    queue.addAfter('second', 500);
    queue.addAfter('third', 250);
    clock.step(2000);
    expect(takeAll(queue)).toEqual(['third', 'second', 'first']);
  });

  it('fires early items first and keeps the rest waiting (client-go TestAddTwoFireEarly)', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.addAfter('first', 1000);
    queue.addAfter('second', 50);
    clock.step(60);
    expect(takeAll(queue)).toEqual(['second']);
    queue.addAfter('third', 2000);
    clock.step(1000);
    expect(takeAll(queue)).toEqual(['first']);
    clock.step(2000);
    expect(takeAll(queue)).toEqual(['third']);
  });

  it('hands out items with equal ready times in addAfter order', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.addAfter('b', 100);
    queue.addAfter('a', 100);
    clock.step(40);
    queue.addAfter('c', 60);
    clock.step(60);
    expect(takeAll(queue)).toEqual(['b', 'a', 'c']);
  });

  it('moves an item to its earlier ready time among other waiting items', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    for (const [item, delay] of [
      ['a', 100],
      ['b', 200],
      ['c', 300],
      ['d', 400],
    ] as const) {
      queue.addAfter(item, delay);
    }
    queue.addAfter('d', 150);
    queue.addAfter('a', 500);
    clock.step(150);
    expect(takeAll(queue)).toEqual(['a', 'd']);
    clock.step(1000);
    expect(takeAll(queue)).toEqual(['b', 'c']);
  });

  it('deduplicates a ready item against one already queued or in flight', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.add('a');
    queue.addAfter('a', 10);
    clock.step(10);
    expect(takeAll(queue)).toEqual(['a']);

    queue.addAfter('a', 10);
    clock.step(10);
    expect(queue.len()).toBe(0);
    queue.done('a');
    expect(takeAll(queue)).toEqual(['a']);
  });

  it('leaves a waiting item waiting when it is added directly meanwhile, as client-go', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.addAfter('a', 100);
    queue.add('a');
    expect(queue.tryGet()).toEqual({ item: 'a' });
    queue.done('a');
    expect(queue.waitingLen()).toBe(1);
    clock.step(100);
    expect(takeAll(queue)).toEqual(['a']);
  });

  it('resolves a pending get when a delayed item becomes ready, synchronously within step', async () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    let result: GetResult<string> | undefined;
    const pending = queue.get().then((r) => {
      result = r;
    });
    queue.addAfter('x', 100);
    clock.step(99);
    await Promise.resolve();
    expect(result).toBeUndefined();
    clock.step(1);
    expect(queue.len()).toBe(0);
    expect(result).toBeUndefined();
    await pending;
    expect(result).toEqual({ item: 'x', shutdown: false });
  });

  it('never adds an item with an infinite delay, and arms no timer for it', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<string>({ clock });
    queue.addAfter('never', Number.POSITIVE_INFINITY);
    expect(queue.waitingLen()).toBe(1);
    expect(clock.pendingTimers()).toBe(0);
    queue.addAfter('never', 10);
    clock.step(10);
    expect(takeAll(queue)).toEqual(['never']);
  });

  it('keeps one timer, for the earliest waiting item', () => {
    const clock = new FakeClock();
    const queue = createDelayingQueue<number>({ clock });
    for (let i = 0; i < 100; i++) queue.addAfter(i, 1000 - i);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(901);
    clock.step(950);
    expect(takeAll(queue)).toEqual(Array.from({ length: 50 }, (_, i) => 99 - i));
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(951);
  });

  it('drops waiting items and its timer on shutdown, and ignores addAfter afterwards', () => {
    const clock = new FakeClock();
    const metrics = new RecordingMetricsProvider();
    const queue = createDelayingQueue<string>({ clock, name: 'q', metricsProvider: metrics });
    queue.addAfter('a', 100);
    queue.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    expect(queue.waitingLen()).toBe(0);
    queue.addAfter('b', 0);
    queue.addAfter('c', 10);
    clock.step(200);
    expect(queue.len()).toBe(0);
    expect(metrics.of('q').retries.value).toBe(1);
    expect(metrics.of('q').adds.value).toBe(0);
  });

  it('does not count waiting items in depth or adds until they are ready', () => {
    const clock = new FakeClock();
    const metrics = new RecordingMetricsProvider();
    const queue = createDelayingQueue<string>({ clock, name: 'q', metricsProvider: metrics });
    queue.addAfter('a', 100);
    queue.addAfter('b', 200);
    expect(metrics.of('q').depth.value).toBe(0);
    expect(metrics.of('q').adds.value).toBe(0);
    clock.step(100);
    expect(metrics.of('q').depth.value).toBe(1);
    expect(metrics.of('q').adds.value).toBe(1);
    expect(metrics.of('q').latency.observations).toEqual([]);
    clock.step(50);
    expect(queue.tryGet()).toEqual({ item: 'a' });
    expect(metrics.of('q').latency.observations).toEqual([0.05]);
  });

  it('counts retries on every addAfter by default (client-go)', () => {
    const metrics = new RecordingMetricsProvider();
    const queue = createDelayingQueue<string>({ clock: new FakeClock(), name: 'q', metricsProvider: metrics });
    queue.addAfter('a', 0);
    queue.addAfter('b', 10);
    queue.addAfter('b', 5);
    queue.addAfter('c', -1);
    queue.add('d');
    expect(metrics.of('q').retries.value).toBe(4);
  });

  it('counts retries only for delays > 0 in positive-delay mode (controller-runtime priority queue)', () => {
    const metrics = new RecordingMetricsProvider();
    const queue = createDelayingQueue<string>({
      clock: new FakeClock(),
      name: 'q',
      metricsProvider: metrics,
      retriesCountedOn: 'positive-delay',
    });
    queue.addAfter('a', 0);
    queue.addAfter('b', 10);
    queue.addAfter('b', 5);
    queue.addAfter('c', -1);
    expect(metrics.of('q').retries.value).toBe(2);
  });

  it('asks for a retries metric only when named', () => {
    const metrics = new RecordingMetricsProvider();
    createDelayingQueue<string>({ clock: new FakeClock(), metricsProvider: metrics }).addAfter('a', 1);
    expect(metrics.calls).toEqual([]);
    createDelayingQueue<string>({ clock: new FakeClock(), name: 'q', metricsProvider: metrics });
    expect(metrics.calls).toContain('retries(q)');
  });

  it('hands out any set of delayed items sorted by earliest ready time, ties in first addAfter order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: -5, max: 50 })), { maxLength: 60 }),
        (calls) => {
          const clock = new FakeClock();
          const queue = createDelayingQueue<number>({ clock });
          // Expected: per item, its earliest ready time; among equal times, immediate adds first
          // (they are queued at once), then the order of each item's first waiting addAfter.
          const immediate: number[] = [];
          const waiting = new Map<number, { at: number; order: number }>();
          calls.forEach(([item, delay], order) => {
            queue.addAfter(item, delay);
            if (delay <= 0) {
              if (!immediate.includes(item)) immediate.push(item);
              return;
            }
            const known = waiting.get(item);
            if (known === undefined) waiting.set(item, { at: delay, order });
            else if (delay < known.at) known.at = delay;
          });
          const expected = [
            ...immediate,
            ...[...waiting.entries()]
              .sort(([, x], [, y]) => x.at - y.at || x.order - y.order)
              .map(([item]) => item)
              .filter((item) => !immediate.includes(item)),
          ];
          clock.step(100);
          expect(takeAll(queue)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
