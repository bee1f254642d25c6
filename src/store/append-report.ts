/**
 * What an append did, counted per sample: the report `History.append`, `appendInChunks` and
 * `appendSamples` return.
 *
 * Contract: every sample offered is counted at most once, as appended, out-of-order or duplicate
 * (an identical repeat of the newest sample is not counted); `newSeries` and `staleMarked` count
 * series. A scrape rejected whole (older than the target's previous one) counts all its samples as
 * out-of-order.
 */
import { AppendOutcome } from './series-buffer.js';

export interface AppendReport {
  readonly appended: number;
  readonly outOfOrder: number;
  readonly duplicates: number;
  readonly newSeries: number;
  readonly staleMarked: number;
}

/** An `AppendReport` being counted. */
export type AppendCounts = { -readonly [K in keyof AppendReport]: AppendReport[K] };

export function newAppendCounts(): AppendCounts {
  return { appended: 0, outOfOrder: 0, duplicates: 0, newSeries: 0, staleMarked: 0 };
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
