/**
 * What an append did, counted per sample: the report `History.append`, `appendInChunks` and
 * `appendSamples` return.
 *
 * Contract: every sample offered is counted at most once, as appended, out-of-order or duplicate
 * (an identical repeat of the newest sample is not counted); `newSeries` and `staleMarked` count
 * series, `eviction` what the held limits evicted (held-limits.ts). A scrape rejected whole (older than the target's previous one) counts all its samples as
 * out-of-order.
 */
import type { Eviction } from './held-limits.js';
import { AppendOutcome } from './series-buffer.js';

export interface AppendReport {
  readonly appended: number;
  readonly outOfOrder: number;
  readonly duplicates: number;
  readonly newSeries: number;
  readonly staleMarked: number;
  /** The target's stale series evicted before the scrape to stay within the held limits; undefined: none. */
  readonly eviction: Eviction | undefined;
}

/** An `AppendReport` being counted. */
export type AppendCounts = { -readonly [K in keyof AppendReport]: AppendReport[K] };

export function newAppendCounts(): AppendCounts {
  return { appended: 0, outOfOrder: 0, duplicates: 0, newSeries: 0, staleMarked: 0, eviction: undefined };
}

/** Counts what appending one sample to its series' buffer did. */
export function countAppend(outcome: AppendOutcome, counts: AppendCounts): void {
  switch (outcome) {
    case AppendOutcome.Appended:
      counts.appended++;
      break;
    case AppendOutcome.Duplicate:
      counts.duplicates++;
      break;
    case AppendOutcome.OutOfOrder:
      counts.outOfOrder++;
      break;
    default:
      break;
  }
}
