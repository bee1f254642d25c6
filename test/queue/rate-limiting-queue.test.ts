import { describe, expect, it } from 'vitest';
import {
  createRateLimitingQueue,
  defaultControllerRateLimiter,
  FakeClock,
  itemExponentialFailureRateLimiter,
  type Queue,
} from '../../src/queue/index.js';
import { RecordingMetricsProvider } from './support/recording-metrics.js';

function takeAll<T>(queue: Queue<T>): T[] {
  const items: T[] = [];
  for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) items.push(got.item);
  return items;
}

describe('rate-limiting queue', () => {
  it('requeues after the rate limiter’s delay, counts requeues, and forgets (client-go TestRateLimitingQueue)', () => {
    const clock = new FakeClock();
    const queue = createRateLimitingQueue<string>(itemExponentialFailureRateLimiter<string>(1, 1000), { clock });
    queue.addRateLimited('one');
    expect(queue.waitingLen()).toBe(1);
    queue.addRateLimited('one');
    expect(queue.waitingLen()).toBe(1);
    expect(queue.numRequeues('one')).toBe(2);
    queue.addRateLimited('two');
    expect(queue.waitingLen()).toBe(2);
    expect(queue.numRequeues('two')).toBe(1);
    clock.step(1);
    expect(takeAll(queue)).toEqual(['one', 'two']);
    queue.forget('one');
    expect(queue.numRequeues('one')).toBe(0);
    queue.addRateLimited('one');
    expect(clock.nextTimerAt()).toBe(2);
  });

  it('runs a failing key on exponential backoff and a succeeding key once, on virtual time', () => {
    const clock = new FakeClock();
    const metrics = new RecordingMetricsProvider();
    const queue = createRateLimitingQueue<string>(defaultControllerRateLimiter<string>(clock), {
      clock,
      name: 'ctl',
      metricsProvider: metrics,
    });
    const syncs: string[] = [];
    const work = (): void => {
      for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) {
        const key = got.item;
        syncs.push(`${key}@${clock.now()}`);
        if (key === 'ns/broken') queue.addRateLimited(key);
        else queue.forget(key);
        queue.done(key);
      }
    };
    queue.add('ns/broken');
    queue.add('ns/fine');
    work();
    for (let next = clock.nextTimerAt(); next !== undefined && next <= 200; next = clock.nextTimerAt()) {
      clock.stepTo(next);
      work();
    }
    expect(syncs).toEqual([
      'ns/broken@0',
      'ns/fine@0',
      'ns/broken@5',
      'ns/broken@15',
      'ns/broken@35',
      'ns/broken@75',
      'ns/broken@155',
    ]);
    expect(queue.numRequeues('ns/broken')).toBe(6);
    expect(queue.numRequeues('ns/fine')).toBe(0);
    expect(metrics.of('ctl').retries.value).toBe(6);
    expect(metrics.of('ctl').adds.value).toBe(7);
  });

  it('counts a failure even after shutdown, but does not requeue (as client-go)', () => {
    const clock = new FakeClock();
    const queue = createRateLimitingQueue<string>(itemExponentialFailureRateLimiter<string>(5, 1000), { clock });
    queue.shutDown();
    queue.addRateLimited('a');
    expect(queue.numRequeues('a')).toBe(1);
    clock.step(10);
    expect(queue.len()).toBe(0);
  });
});
