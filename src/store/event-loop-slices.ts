/**
 * Long store work cut into slices with a yield to the event loop (setImmediate) between them, so
 * that appending a large page does not stall a server.
 *
 * Contract: a slice is `chunkSize` items when that is given, otherwise as many items as fit in about
 * `sliceMs` milliseconds, checked every 256 items. Every item is visited exactly once, in order.
 * Work done between yields sees the store as the previous slices left it.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

export interface Slicing {
  /** Items per slice; `undefined`: slices by time. */
  readonly chunkSize: number | undefined;
  readonly sliceMs: number;
}

/** Runs `step(from, to)` over `[0, n)` in slices; yields between slices (not before the first). */
export async function rangeInSlices(
  n: number,
  step: (from: number, to: number) => void,
  slicing: Slicing,
): Promise<void> {
  const { chunkSize, sliceMs } = slicing;
  let from = 0;
  while (from < n) {
    if (chunkSize !== undefined) {
      const to = Math.min(n, from + chunkSize);
      step(from, to);
      from = to;
    } else {
      const started = performance.now();
      do {
        const to = Math.min(n, from + 256);
        step(from, to);
        from = to;
      } while (from < n && performance.now() - started < sliceMs);
    }
    if (from < n) await yieldToEventLoop();
  }
}

/** Calls `visit` on each item `items` yields, in slices; yields before every slice. */
export async function eachInSlices<T>(items: Iterator<T>, visit: (item: T) => void, slicing: Slicing): Promise<void> {
  const { chunkSize, sliceMs } = slicing;
  for (let done = false; !done; ) {
    await yieldToEventLoop();
    const started = performance.now();
    for (let k = 1; ; k++) {
      const next = items.next();
      if (next.done === true) {
        done = true;
        break;
      }
      visit(next.value);
      if ((k & 255) === 0 && (chunkSize !== undefined ? k >= chunkSize : performance.now() - started >= sliceMs)) break;
    }
  }
}
