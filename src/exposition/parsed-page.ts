/**
 * What the exposition parser produces: families, a series table, and samples as parallel typed
 * arrays (series id, value, timestamp). Cheap to build, to transfer between threads, and to append
 * to the history; `pageSamples` gives a friendly list for tests and small pages.
 */
import type { Labels } from './labels.js';
import { SeriesTable, type SeriesTableData } from './series-table.js';

/** `prometheus-text` is the text format 0.0.4; `openmetrics` is OpenMetrics 1.0. */
export type ExpositionFormat = 'prometheus-text' | 'openmetrics';

export type MetricType =
  | 'counter'
  | 'gauge'
  | 'histogram'
  | 'summary'
  | 'untyped'
  | 'unknown'
  | 'info'
  | 'stateset'
  | 'gaugehistogram';

export interface MetricFamily {
  /** As in `# TYPE`: with `_total` for counters in the text format, without it in OpenMetrics. */
  readonly name: string;
  /** `untyped` when the page gave no `# TYPE` line. */
  readonly type: MetricType;
  readonly help: string | undefined;
  readonly unit: string | undefined;
}

export interface SampleColumns {
  readonly count: number;
  /** Series id (index into the series table) of each sample. */
  readonly series: Int32Array;
  readonly values: Float64Array;
  /** Unix milliseconds of each sample as the page gave it, `NaN` when the sample had none. */
  readonly timestamps: Float64Array;
}

export interface ParsedPage {
  readonly format: ExpositionFormat;
  /** Families kept by the `keep` filter, in order of first appearance. */
  readonly families: readonly MetricFamily[];
  readonly series: SeriesTable;
  /** Samples in page order. A series normally has one sample; a recording has one per timestamp. */
  readonly samples: SampleColumns;
  /** Lines skipped because their family was filtered out. */
  readonly skippedLines: number;
}

export interface PageSample {
  readonly name: string;
  readonly labels: Labels;
  readonly value: number;
  /** Unix milliseconds, absent when the sample carried no timestamp. */
  readonly timestampMs?: number;
}

/** Every sample of a page as an object (allocates: for tests and small pages). */
export function pageSamples(page: ParsedPage): PageSample[] {
  const out: PageSample[] = [];
  const { series, values, timestamps, count } = page.samples;
  for (let i = 0; i < count; i++) {
    const id = series[i] as number;
    const ts = timestamps[i] as number;
    const base = { name: page.series.name(id), labels: page.series.labels(id), value: values[i] as number };
    out.push(Number.isNaN(ts) ? base : { ...base, timestampMs: ts });
  }
  return out;
}

/** A page in a form `postMessage` can move cheaply, plus the buffers to transfer. */
export interface ParsedPageData {
  readonly format: ExpositionFormat;
  readonly families: readonly MetricFamily[];
  readonly series: SeriesTableData;
  readonly samples: SampleColumns;
  readonly skippedLines: number;
}

export function pageToData(page: ParsedPage): { data: ParsedPageData; transfer: ArrayBuffer[] } {
  const series = page.series.toData();
  const s = page.samples;
  const samples: SampleColumns = {
    count: s.count,
    series: s.series.slice(0, s.count),
    values: s.values.slice(0, s.count),
    timestamps: s.timestamps.slice(0, s.count),
  };
  const transfer = [
    series.bytes.buffer,
    series.offsets.buffer,
    series.families.buffer,
    series.hashes.buffer,
    samples.series.buffer,
    samples.values.buffer,
    samples.timestamps.buffer,
  ].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
  return {
    data: { format: page.format, families: page.families, series, samples, skippedLines: page.skippedLines },
    transfer,
  };
}

export function pageFromData(data: ParsedPageData): ParsedPage {
  return {
    format: data.format,
    families: data.families,
    series: SeriesTable.fromData(data.series),
    samples: data.samples,
    skippedLines: data.skippedLines,
  };
}
