/**
 * `onAbort`: however many operations wait on one signal, it carries one 'abort' listener (none once they are
 * done), every waiting callback runs once on abort, and a forgotten one does not.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onAbort } from '../../src/util/abort-listeners.js';

const listeners = (signal: AbortSignal): number => getEventListeners(signal, 'abort').length;

describe('onAbort', () => {
  it('puts one listener on the signal for any number of waits, and removes it after the last', () => {
    const controller = new AbortController();
    const forgets = Array.from({ length: 50 }, () => onAbort(controller.signal, () => {}));
    expect(listeners(controller.signal)).toBe(1);
    for (const forget of forgets.slice(1)) forget();
    expect(listeners(controller.signal)).toBe(1);
    forgets[0]?.();
    expect(listeners(controller.signal)).toBe(0);
    // Waiting again after every wait was forgotten listens again.
    const forget = onAbort(controller.signal, () => {});
    expect(listeners(controller.signal)).toBe(1);
    forget();
    expect(listeners(controller.signal)).toBe(0);
  });

  it('calls every callback still waiting once on abort, not the forgotten ones', () => {
    const controller = new AbortController();
    const called: string[] = [];
    const same = (): void => {
      called.push('same');
    };
    onAbort(controller.signal, () => called.push('a'));
    const forgetB = onAbort(controller.signal, () => called.push('b'));
    onAbort(controller.signal, same);
    const forgetSecondSame = onAbort(controller.signal, same);
    forgetB();
    forgetSecondSame();
    // A callback that forgets itself while the abort runs (a request finishing) is fine.
    const forgetSelf: Array<() => void> = [];
    forgetSelf.push(onAbort(controller.signal, () => forgetSelf[0]?.()));
    controller.abort();
    controller.abort();
    expect(called).toEqual(['a', 'same']);
    expect(listeners(controller.signal)).toBe(0);
  });
});
