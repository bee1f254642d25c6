/**
 * Long synchronous work shared fairly with the event loop: the work calls `pause()` between its units (an
 * expression at one time, a queue); once the current slice has run for `sliceMs`, `pause()` yields to the
 * event loop (`setImmediate`: pending requests, timers, I/O and signal handlers run), so a server on the same
 * loop answers within about one slice plus one unit of work.
 *
 * Contract: `pause()` rejects with the signal's reason once the signal is aborted (checked before and after
 * yielding), so a stop request ends the work at its next unit. Between units the work's data may have changed
 * (other callbacks ran): units must not hold views into mutable storage across a pause.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** The default slice: short enough for a 100 ms `/healthz` p99 with room for several units and the request. */
export const DEFAULT_SLICE_MS = 10;

export class EventLoopSlicer {
  readonly sliceMs: number;
  readonly signal: AbortSignal | undefined;
  #sliceStarted = performance.now();

  constructor(options: { readonly sliceMs?: number; readonly signal?: AbortSignal | undefined } = {}) {
    this.sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
    this.signal = options.signal;
  }

  /** Between two units of work: yields when the slice is used up; rejects when the signal is aborted. */
  async pause(): Promise<void> {
    this.signal?.throwIfAborted();
    if (performance.now() - this.#sliceStarted < this.sliceMs) return;
    await yieldToEventLoop();
    this.signal?.throwIfAborted();
    this.#sliceStarted = performance.now();
  }
}
