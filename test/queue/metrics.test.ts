import { describe, expect, it } from 'vitest';
import {
  createDelayingQueue,
  createQueue,
  FakeClock,
  noopMetricsProvider,
  UNFINISHED_WORK_UPDATE_PERIOD_MS,
} from '../../src/queue/index.js';
import { RecordingMetricsProvider } from './support/recording-metrics.js';

describe('queue metrics', () => {
  it('counts adds, depth, queue and work duration as client-go (TestMetrics, on a fake clock)', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingMetricsProvider();
    const queue = createQueue<string>({ name: 'test', clock, metricsProvider: provider });
    const m = provider.of('test');

    queue.add('foo');
    expect(m.adds.value).toBe(1);
    expect(m.depth.value).toBe(1);

    clock.step(0.05);
    expect(queue.tryGet()).toEqual({ item: 'foo' });
    expect(m.latency.observations).toEqual([5e-5]);
    expect(m.depth.value).toBe(0);

    // Re-added while processing: one counted add, in depth at once, not in len() until done.
    for (let i = 0; i < 5; i++) queue.add('foo');
    expect(m.adds.value).toBe(2);
    expect(m.depth.value).toBe(1);
    expect(queue.len()).toBe(0);

    clock.step(0.025);
    queue.done('foo');
    expect(m.workDuration.observations).toEqual([2.5e-5]);
    expect(m.depth.value).toBe(1);
    expect(queue.len()).toBe(1);

    expect(queue.tryGet()).toEqual({ item: 'foo' });
    expect(m.latency.observations).toEqual([5e-5, 2.5e-5]);
    expect(m.depth.value).toBe(0);

    clock.stepTo(UNFINISHED_WORK_UPDATE_PERIOD_MS);
    expect(m.unfinished.value).toBe(0.499925);
    expect(m.longest.value).toBe(0.499925);

    queue.done('foo');
    expect(m.workDuration.observations).toEqual([2.5e-5, 0.499925]);
    expect(m.adds.value).toBe(2);
  });

  it('measures queue duration from the first add, and ignores adds of a waiting item', () => {
    const clock = new FakeClock(1_000);
    const provider = new RecordingMetricsProvider();
    const queue = createQueue<string>({ name: 'q', clock, metricsProvider: provider });
    queue.add('a');
    clock.step(100);
    queue.add('a');
    clock.step(150);
    queue.tryGet();
    expect(provider.of('q').latency.observations).toEqual([0.25]);
    expect(provider.of('q').adds.value).toBe(1);
  });

  it('refreshes unfinished work (sum of ages) and longest running processor (max age) every 500 ms', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingMetricsProvider();
    const queue = createQueue<string>({ name: 'q', clock, metricsProvider: provider });
    const m = provider.of('q');
    queue.add('a');
    queue.add('b');
    queue.add('c');
    clock.step(100);
    queue.tryGet();
    clock.step(200);
    queue.tryGet();
    queue.tryGet();
    queue.done('c');
    expect(clock.nextTimerAt()).toBe(500);
    clock.step(199);
    expect(m.unfinished.value).toBe(0);
    clock.step(1);
    // a since 100 (0.4 s), b since 300 (0.2 s).
    expect(m.unfinished.value).toBe(0.6000000000000001);
    expect(m.longest.value).toBe(0.4);
    queue.done('a');
    clock.step(500);
    expect(m.unfinished.value).toBe(0.7);
    expect(m.longest.value).toBe(0.7);
    queue.done('b');
    clock.step(499);
    expect(m.unfinished.value).toBe(0.7);
    clock.step(1);
    expect(m.unfinished.value).toBe(0);
    expect(m.longest.value).toBe(0);
  });

  it('stops the refresher on shutdown', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingMetricsProvider();
    const queue = createQueue<string>({ name: 'q', clock, metricsProvider: provider });
    queue.add('a');
    queue.tryGet();
    clock.step(500);
    expect(provider.of('q').unfinished.value).toBe(0.5);
    expect(clock.pendingTimers()).toBe(1);
    queue.shutDown();
    expect(clock.pendingTimers()).toBe(0);
    clock.step(3_600_000);
    expect(provider.of('q').unfinished.value).toBe(0.5);
    queue.done('a');
    expect(provider.of('q').workDuration.observations).toEqual([3600.5]);
  });

  it('stops the refresher on shutDownWithDrain too', () => {
    const clock = new FakeClock(0);
    const queue = createDelayingQueue<string>({ name: 'q', clock, metricsProvider: new RecordingMetricsProvider() });
    void queue.shutDownWithDrain();
    expect(clock.pendingTimers()).toBe(0);
  });

  it('records nothing and arms no timer for an unnamed queue or the no-op provider', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingMetricsProvider();
    const unnamed = createQueue<string>({ clock, metricsProvider: provider });
    unnamed.add('a');
    expect(provider.calls).toEqual([]);
    createQueue<string>({ name: 'q', clock, metricsProvider: noopMetricsProvider }).add('a');
    createQueue<string>({ name: 'q', clock }).add('a');
    createDelayingQueue<string>({ name: 'q', clock }).addAfter('a', 0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('asks the provider for the six queue metrics once per named queue, and retries for delaying queues', () => {
    const provider = new RecordingMetricsProvider();
    createQueue<string>({ name: 'plain', clock: new FakeClock(), metricsProvider: provider });
    expect(provider.calls).toEqual([
      'depth(plain)',
      'adds(plain)',
      'latency(plain)',
      'workDuration(plain)',
      'unfinished(plain)',
      'longest(plain)',
    ]);
    createDelayingQueue<string>({ name: 'delaying', clock: new FakeClock(), metricsProvider: provider });
    expect(provider.calls.slice(6)).toEqual([
      'depth(delaying)',
      'adds(delaying)',
      'latency(delaying)',
      'workDuration(delaying)',
      'unfinished(delaying)',
      'longest(delaying)',
      'retries(delaying)',
    ]);
  });

  it('keeps exact durations while many keys come and go (idle records swept and reused)', () => {
    const clock = new FakeClock(0);
    const provider = new RecordingMetricsProvider();
    const queue = createQueue<string>({ name: 'q', clock, metricsProvider: provider });
    const m = provider.of('q');
    const keysPerRound = 3_000;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < keysPerRound; i++) queue.add(`round-${round}/key-${i}`);
      clock.step(10);
      const taken: string[] = [];
      for (let got = queue.tryGet(); got !== undefined; got = queue.tryGet()) taken.push(got.item);
      expect(taken).toHaveLength(keysPerRound);
      clock.step(5);
      for (const item of taken) queue.done(item);
    }
    const total = 6 * keysPerRound;
    expect(m.adds.value).toBe(total);
    expect(m.depth.value).toBe(0);
    expect(m.latency.observations).toEqual(new Array(total).fill(0.01));
    expect(m.workDuration.observations).toEqual(new Array(total).fill(0.005));
    // t = 90 (6 rounds of 15 ms). A swept key comes back and is handed out at 110.
    queue.add('round-0/key-0');
    queue.add('late');
    clock.step(20);
    expect(queue.tryGet()).toEqual({ item: 'round-0/key-0' });
    clock.stepTo(500);
    expect(m.unfinished.value).toBe(0.39);
    expect(m.longest.value).toBe(0.39);
    expect(m.latency.observations.slice(total)).toEqual([0.02]);
  });

  it('rounds durations to whole nanoseconds, as Go durations', () => {
    const clock = new FakeClock(0.1);
    const provider = new RecordingMetricsProvider();
    const queue = createQueue<string>({ name: 'q', clock, metricsProvider: provider });
    queue.add('a');
    clock.step(0.2);
    queue.tryGet();
    clock.step(1e-7);
    queue.done('a');
    expect(provider.of('q').latency.observations).toEqual([0.0002]);
    expect(provider.of('q').workDuration.observations).toEqual([0]);
  });
});
