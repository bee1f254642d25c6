/**
 * Recording source: an OpenMetrics file with a timestamp on every sample (DESIGN.md §4), read into
 * a `History`.
 *
 * Contract:
 * - Every sample must carry a timestamp and the file must end with `# EOF`; anything malformed is
 *   an `ExpositionError` naming the file, line and column.
 * - Targets are named `job/instance` from the samples' `job` and `instance` labels (either may be
 *   missing, leaving its side empty). Series keep their labels as recorded, `job`/`instance`
 *   included, as Prometheus stores them after a scrape.
 * - Samples with neither `job` nor `instance` (a plain capture of a `/metrics` page, a scrape log)
 *   all belong to one target named after the file: its base name, `F` for `/some/dir/F`. They get
 *   the label `instance="F"` (and no `job`), on the target and on every such series, so that
 *   `targetName()` of any of their label sets, the target id in the history and in `targets` are
 *   all `F`: every layer above (history, engine, queue identity) sees that one target, and no
 *   sample is left without target labels. Series that carry `job` or `instance` are untouched, so
 *   a recording mixing labelled targets with unlabelled samples keeps its labelled targets as
 *   they are.
 * - Samples of a series may appear anywhere in the file (one block per family, blocks in any
 *   order); each series is put in time order before insertion. A repeated timestamp with another
 *   value is dropped and counted in `duplicates`.
 * - Unless a history is passed in, the recording gets its own with no retention limit.
 * - Staleness: a target with an `up` series (the scrapes, as Prometheus and this project's history write
 *   them) is replayed as scraped: a series whose every sample (from the first scrape on) falls on one of the target's scrapes gets a
 *   stale marker at each later scrape that left it out, and at a failed one (`up` 0), exactly where the live
 *   history had them. Without `up` (a recording made elsewhere), and for series with their own timestamps,
 *   no stale markers are made, so a gap in a series reads like a gap in Prometheus: the value holds for the
 *   5-minute lookback.
 * - `up` samples fill the targets' scrape logs (`History.scrapes`), not a series. `startMs` is the first sample
 *   of a series (a failed first scrape holds no data); `endMs` the last sample or scrape.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { labelValue } from '../exposition/labels.js';
import { parseExposition } from '../exposition/parser.js';
import { LABEL, SCRAPE_HEALTH } from '../metrics/names.js';
import { History, type ScrapeTarget } from './history.js';

export const RECORDING_MAX_BYTES = 1024 * 1024 * 1024;

export interface RecordingOptions {
  /** Append into this history instead of a new unbounded one. */
  readonly history?: History;
  /** Keep only these families (see `keepFamilies`). */
  readonly keep?: (family: string) => boolean;
  /** Default `RECORDING_MAX_BYTES`. */
  readonly maxBytes?: number;
  readonly maxSeries?: number;
}

export interface Recording {
  readonly history: History;
  /** Target ids found, sorted. */
  readonly targets: readonly string[];
  /** First and last sample time (unix ms); `undefined` for a recording without samples. */
  readonly startMs: number | undefined;
  readonly endMs: number | undefined;
  readonly samples: number;
  readonly series: number;
  /** Samples dropped because another sample of the series had the same time. */
  readonly duplicates: number;
}

/** Reads a recording file. */
export async function readRecording(file: string, options: RecordingOptions = {}): Promise<Recording> {
  const text = await readFile(file, 'utf8');
  return loadRecording(text, file, options);
}

/** Loads recording text; `file` names the target of samples without `job`/`instance` and appears in errors. */
export function loadRecording(text: string, file: string, options: RecordingOptions = {}): Recording {
  const page = parseExposition(text, {
    format: 'openmetrics',
    requireTimestamps: true,
    source: file,
    maxBytes: options.maxBytes ?? RECORDING_MAX_BYTES,
    ...(options.maxSeries !== undefined ? { maxSeries: options.maxSeries } : {}),
    ...(options.keep !== undefined ? { keep: options.keep } : {}),
  });
  const history =
    options.history ??
    new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: Number.POSITIVE_INFINITY });
  const fallbackName = basename(file);
  const fallbackTarget = { id: fallbackName, labels: { [LABEL.instance]: fallbackName } };

  // Group samples by series (counting sort, stable: file order within a series).
  const { count, series, values, timestamps } = page.samples;
  const nSeries = page.series.count;
  const offsets = new Int32Array(nSeries + 1);
  for (let i = 0; i < count; i++) {
    const at = (series[i] as number) + 1;
    offsets[at] = (offsets[at] as number) + 1;
  }
  for (let s = 0; s < nSeries; s++) offsets[s + 1] = (offsets[s + 1] as number) + (offsets[s] as number);
  const fill = offsets.slice(0, nSeries);
  const t = new Float64Array(count);
  const v = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const s = series[i] as number;
    const at = fill[s] as number;
    fill[s] = at + 1;
    t[at] = timestamps[i] as number;
    v[at] = values[i] as number;
  }

  const targetOf = (s: number): ScrapeTarget => {
    const recorded = page.series.labels(s);
    const job = labelValue(recorded, LABEL.job);
    const instance = labelValue(recorded, LABEL.instance);
    if (job === undefined && instance === undefined) return fallbackTarget;
    return {
      id: `${job ?? ''}/${instance ?? ''}`,
      labels: { ...(job !== undefined ? { job } : {}), ...(instance !== undefined ? { instance } : {}) },
    };
  };
  for (let s = 0; s < nSeries; s++) sortByTime(t, v, offsets[s] as number, offsets[s + 1] as number);
  // Each target's scrapes, from its `up` series.
  const scrapesOf = new Map<string, Float64Array>();
  for (let s = 0; s < nSeries; s++) {
    const from = offsets[s] as number;
    const to = offsets[s + 1] as number;
    if (to > from && page.series.name(s) === SCRAPE_HEALTH.up) scrapesOf.set(targetOf(s).id, t.slice(from, to));
  }

  const targets = new Set<string>();
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let duplicates = 0;
  for (let s = 0; s < nSeries; s++) {
    const from = offsets[s] as number;
    const to = offsets[s + 1] as number;
    if (to === from) continue;
    const target = targetOf(s);
    targets.add(target.id);
    const name = page.series.name(s);
    end = Math.max(end, t[to - 1] as number);
    if (name === SCRAPE_HEALTH.up) {
      history.recordScrapes(target, t.subarray(from, to), v.subarray(from, to));
      continue;
    }
    const times = t.subarray(from, to);
    const scrapes = scrapesOf.get(target.id);
    const report = history.appendSamples(
      target,
      name,
      target === fallbackTarget ? { ...page.series.labels(s), ...fallbackTarget.labels } : page.series.labels(s),
      times,
      v.subarray(from, to),
      scrapes !== undefined && allWithin(times, scrapes) ? scrapes : undefined,
    );
    duplicates += report.duplicates + report.outOfOrder;
    start = Math.min(start, t[from] as number);
  }
  return {
    history,
    targets: [...targets].sort(),
    startMs: Number.isFinite(start) ? start : undefined,
    endMs: Number.isFinite(end) ? end : undefined,
    samples: count,
    series: nSeries,
    duplicates,
  };
}

/**
 * Whether every time of `times` from the first scrape on is one of `scrapes` (both ascending). Earlier samples
 * are the history's before its oldest `up` (retention cut them at slightly different times) and do not count.
 */
function allWithin(times: ArrayLike<number>, scrapes: ArrayLike<number>): boolean {
  let k = 0;
  for (let i = 0; i < times.length; i++) {
    const time = times[i] as number;
    if (time < (scrapes[0] as number)) continue;
    while (k < scrapes.length && (scrapes[k] as number) < time) k++;
    if (k === scrapes.length || scrapes[k] !== time) return false;
  }
  return true;
}

/** Sorts `t[from, to)` ascending, carrying `v` along; stable; no work when already sorted. */
function sortByTime(t: Float64Array, v: Float64Array, from: number, to: number): void {
  let sorted = true;
  for (let i = from + 1; i < to; i++) {
    if ((t[i] as number) < (t[i - 1] as number)) {
      sorted = false;
      break;
    }
  }
  if (sorted) return;
  const idx = Array.from({ length: to - from }, (_, k) => from + k);
  idx.sort((a, b) => (t[a] as number) - (t[b] as number) || a - b);
  const ts = idx.map((i) => t[i] as number);
  const vs = idx.map((i) => v[i] as number);
  t.set(ts, from);
  v.set(vs, from);
}
