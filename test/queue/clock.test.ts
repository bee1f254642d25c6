import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeClock, realClock } from '../../src/queue/index.js';

describe('FakeClock', () => {
  it('starts at the given time, 0 by default, and moves only when stepped', () => {
    expect(new FakeClock().now()).toBe(0);
    const clock = new FakeClock(1_700_000_000_000);
    expect(clock.now()).toBe(1_700_000_000_000);
    clock.step(250);
    expect(clock.now()).toBe(1_700_000_000_250);
    clock.stepTo(1_700_000_001_000);
    expect(clock.now()).toBe(1_700_000_001_000);
  });

  it('fires due timers in time order, ties in scheduling order, with now() at each due time', () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    const at = (label: string) => () => fired.push(`${label}@${clock.now()}`);
    clock.after(30, at('c'));
    clock.after(10, at('a'));
    clock.after(20, at('b1'));
    clock.after(20, at('b2'));
    clock.after(31, at('late'));
    clock.step(30);
    expect(fired).toEqual(['a@1010', 'b1@1020', 'b2@1020', 'c@1030']);
    expect(clock.now()).toBe(1030);
    expect(clock.nextTimerAt()).toBe(1031);
  });

  it('fires, in the same step, timers scheduled by a firing timer that are also due', () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    const tick = (): void => {
      fired.push(clock.now());
      clock.after(100, tick);
    };
    clock.after(100, tick);
    clock.step(450);
    expect(fired).toEqual([100, 200, 300, 400]);
    expect(clock.nextTimerAt()).toBe(500);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('treats a delay <= 0 or NaN as due now: fired by the next step, even step(0), never inside after()', () => {
    const clock = new FakeClock(5);
    const fired: string[] = [];
    clock.after(0, () => fired.push('zero'));
    clock.after(-10, () => fired.push('negative'));
    clock.after(Number.NaN, () => fired.push('nan'));
    expect(fired).toEqual([]);
    expect(clock.nextTimerAt()).toBe(5);
    clock.step(0);
    expect(fired).toEqual(['zero', 'negative', 'nan']);
    expect(clock.now()).toBe(5);
  });

  it('never fires an infinite delay and does not count it as pending', () => {
    const clock = new FakeClock();
    let fired = false;
    clock.after(Number.POSITIVE_INFINITY, () => {
      fired = true;
    });
    expect(clock.pendingTimers()).toBe(0);
    expect(clock.nextTimerAt()).toBeUndefined();
    clock.step(Number.MAX_SAFE_INTEGER);
    expect(fired).toBe(false);
  });

  it('cancels timers, before they fire and harmlessly after', () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    const a = clock.after(10, () => fired.push('a'));
    const b = clock.after(20, () => fired.push('b'));
    a.cancel();
    a.cancel();
    expect(clock.nextTimerAt()).toBe(20);
    clock.step(20);
    b.cancel();
    expect(fired).toEqual(['b']);
    expect(clock.nextTimerAt()).toBeUndefined();
  });

  it('lets a firing timer cancel a later timer due in the same step', () => {
    const clock = new FakeClock();
    const fired: string[] = [];
    const later = clock.after(20, () => fired.push('later'));
    clock.after(10, () => {
      fired.push('first');
      later.cancel();
    });
    clock.step(100);
    expect(fired).toEqual(['first']);
  });

  it('drives a discrete-event loop with nextTimerAt and stepTo', () => {
    const clock = new FakeClock(0.1);
    const fired: number[] = [];
    for (const delay of [0.2, 0.30000000000000004, 7, 1e-9]) clock.after(delay, () => fired.push(clock.now()));
    for (let next = clock.nextTimerAt(); next !== undefined; next = clock.nextTimerAt()) clock.stepTo(next);
    expect(fired).toEqual([0.1 + 1e-9, 0.1 + 0.2, 0.1 + 0.30000000000000004, 7.1]);
  });

  it('rejects steps backwards, non-finite steps and reentrant steps', () => {
    const clock = new FakeClock(100);
    expect(() => clock.step(-1)).toThrow(RangeError);
    expect(() => clock.step(Number.NaN)).toThrow(RangeError);
    expect(() => clock.step(Number.POSITIVE_INFINITY)).toThrow(RangeError);
    expect(() => clock.stepTo(99)).toThrow(RangeError);
    expect(() => new FakeClock(Number.NaN)).toThrow(RangeError);
    clock.after(1, () => clock.step(1));
    expect(() => clock.step(1)).toThrow(/not reentrant/);
    clock.after(1, () => {});
    clock.step(1);
    expect(clock.now()).toBe(102);
  });
});

describe('realClock', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reads epoch milliseconds, never going backwards', () => {
    const first = realClock.now();
    const second = realClock.now();
    expect(first).toBeGreaterThan(Date.UTC(2024, 0, 1));
    expect(second).toBeGreaterThanOrEqual(first);
  });

  it('fires after the delay, on Node timers (driven by fake timers here)', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const fired: string[] = [];
    realClock.after(100, () => fired.push('100'));
    const cancelled = realClock.after(50, () => fired.push('cancelled'));
    realClock.after(-5, () => fired.push('now'), { background: true });
    cancelled.cancel();
    vi.advanceTimersByTime(99);
    expect(fired).toEqual(['now']);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['now', '100']);
  });

  it('holds delays longer than a Node timer can (2^31 - 1 ms) by re-arming', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let fired = false;
    const longMs = 2 ** 31 + 5_000;
    realClock.after(longMs, () => {
      fired = true;
    });
    vi.advanceTimersByTime(2 ** 31 - 1);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(5_000);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(true);
  });

  it('never fires an infinite delay', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    let fired = false;
    realClock.after(Number.POSITIVE_INFINITY, () => {
      fired = true;
    });
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(2 ** 40);
    expect(fired).toBe(false);
  });
});
