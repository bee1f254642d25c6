/**
 * The limits a state file (state-file.ts) is read within, sized from the scrape settings: the file may bring into
 * the history no more than the scrapes of as many targets could, so a tampered, damaged or hostile file costs no
 * more memory or time than the service's own scrapes.
 *
 * Contract: `stateFileLimits(settings, targets)` sizes every limit from the held series, label and label-value limits,
 * the samples a series holds (`historySizing`) and the number of targets whose history the file may hold; the
 * history's retention and `maxSamplesPerSeries` bound the samples kept of each series (the newest, within the
 * retention), as they bound a scrape's.
 */
import { historySizing, type ScrapeSettings } from '../scrape/scrape-settings.js';

export type StateFileLimits = {
  /** Bytes of the file as stored (gzip-compressed). */
  readonly maxFileBytes: number;
  /** Bytes of its content once decompressed; decompression stops as soon as it has produced more. */
  readonly maxContentBytes: number;
  /** Bytes of one line of the content: the header or one series' record. */
  readonly maxLineBytes: number;
  /** Series of one target (`scrape.heldSeriesLimit`: what a target's scrapes may leave in the history). */
  readonly maxSeriesPerTarget: number;
  /** Series of all targets together (`scrape.totalSeriesLimit` when it is lower than the targets' held limits). */
  readonly maxSeries: number;
  /** Labels of a series besides its target's (`scrape.labelLimit`). */
  readonly labelLimit: number;
  /** Characters of the name or value of a series' label besides its target's (`scrape.labelValueLimit`). */
  readonly labelValueLimit: number;
  /** Characters of a series' label names and values together besides its target's (`scrape.labelSetLengthLimit`). */
  readonly labelSetLengthLimit: number;
  /** How far past the clock at restore a sample may lie: a later one refuses the file. */
  readonly futureSkewMs: number;
};

export type StateFileSettings = Pick<
  ScrapeSettings,
  | 'intervalMs'
  | 'retentionMs'
  | 'heldSeriesLimit'
  | 'totalSeriesLimit'
  | 'labelLimit'
  | 'labelValueLimit'
  | 'labelSetLengthLimit'
>;

/**
 * Labels of a target (discovery gives five: `namespace`, `pod`, `container`, `job`, `instance`; static targets
 * two), and the characters of each one's name or value (a DNS name of 253 characters with a port fits).
 */
export const MAX_TARGET_LABELS = 8;
export const TARGET_LABEL_VALUE_LIMIT = 512;
/**
 * A sample up to this far ahead of the clock at restore is accepted: the clocks of two runs (a restarted
 * container, a pod rescheduled to another node) differ by far less. A later sample would hold its series'
 * newest point in the future, so the file is refused.
 */
export const STATE_FUTURE_SKEW_MS = 60_000;

/** Bytes of a sample in the file: its time and its value, float64 each. */
export const BYTES_PER_SAMPLE = 16;
/** The most bytes one character of a label takes in the file: `\u001f` in JSON. */
const JSON_BYTES_PER_CHARACTER = 6;
/** A label's quotes, `:`, `,` and `=`; a record's target index, sample count and braces. */
const LABEL_FRAME_BYTES = 8;
const RECORD_FRAME_BYTES = 256;
/** The record line of an average series (a client-go series' is 150 to 400 bytes), for the content's size. */
const AVERAGE_RECORD_BYTES = 1024;

export function stateFileLimits(settings: StateFileSettings, targets: number): StateFileLimits {
  const { maxSamplesPerSeries } = historySizing(settings);
  const maxSeries = Math.min(settings.heldSeriesLimit * targets, settings.totalSeriesLimit);
  const seriesLabelBytes = labelBytes(settings.labelValueLimit);
  const targetLabelBytes = labelBytes(TARGET_LABEL_VALUE_LIMIT);
  // A record holds every label twice (its key and its labels); the header every target's labels once.
  const recordLabels = 2 * (settings.labelLimit * seriesLabelBytes + MAX_TARGET_LABELS * targetLabelBytes);
  const headerLabels = targets * MAX_TARGET_LABELS * targetLabelBytes;
  const maxLineBytes = RECORD_FRAME_BYTES + Math.max(recordLabels, headerLabels);
  // The header, the series, the end line.
  const maxContentBytes =
    maxLineBytes + maxSeries * (AVERAGE_RECORD_BYTES + BYTES_PER_SAMPLE * maxSamplesPerSeries) + RECORD_FRAME_BYTES;
  return {
    // The content compresses several times over (repeated labels, time differences), and the average record
    // above is generous: a file as large as its content's limit holds more than the content may.
    maxFileBytes: maxContentBytes,
    maxContentBytes,
    maxLineBytes,
    maxSeriesPerTarget: settings.heldSeriesLimit,
    maxSeries,
    labelLimit: settings.labelLimit,
    labelValueLimit: settings.labelValueLimit,
    labelSetLengthLimit: settings.labelSetLengthLimit,
    futureSkewMs: STATE_FUTURE_SKEW_MS,
  };
}

function labelBytes(characters: number): number {
  return 2 * characters * JSON_BYTES_PER_CHARACTER + LABEL_FRAME_BYTES;
}
