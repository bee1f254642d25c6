/**
 * What a reader that keeps results computed from the history (the diagnosis engine's evaluated steps) needs
 * to know to keep them: the earliest sample time written since it last asked. A result computed at a time
 * before that watermark read only samples that were already there, so it still holds; one at or after it may
 * not. Removing a target's series changes every time (the watermark is -Infinity).
 *
 * Retention does not move the watermark: it drops samples older than every window the history serves, and a
 * result computed while they were there is what the full window says.
 */
export type ChangeReader = {
  /** The earliest sample time written since the previous call (or since the reader was made); +Infinity: none. */
  takeEarliest(): number;
  /** Stops tracking: the reader is forgotten. */
  close(): void;
};

export class ChangeWatermarks {
  readonly #readers = new Set<{ earliest: number }>();

  reader(): ChangeReader {
    const state = { earliest: Number.POSITIVE_INFINITY };
    this.#readers.add(state);
    return {
      takeEarliest: () => {
        const earliest = state.earliest;
        state.earliest = Number.POSITIVE_INFINITY;
        return earliest;
      },
      close: () => {
        this.#readers.delete(state);
      },
    };
  }

  /** Samples (or stale markers) were written at `timeMs` or later. */
  written(timeMs: number): void {
    for (const state of this.#readers) if (timeMs < state.earliest) state.earliest = timeMs;
  }

  /** Data at any time may have changed. */
  everything(): void {
    this.written(Number.NEGATIVE_INFINITY);
  }
}
