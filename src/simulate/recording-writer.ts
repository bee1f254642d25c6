/**
 * Recordings: a registry scraped at intervals of (virtual) time, written as OpenMetrics text with a
 * timestamp on every sample (DESIGN.md §4), importable with
 * `promtool tsdb create-blocks-from openmetrics FILE DIR`.
 *
 * Layout: families sorted by name, each once with `# HELP` and `# TYPE` (counters under their
 * family name without `_total`, samples with it, as OpenMetrics requires); within a family the
 * series sorted by their labels, each series' samples in time order (a histogram's buckets, `_sum`
 * and `_count` of one labelset grouped per timestamp); every sample labelled with the target's
 * `job` and `instance`; labels sorted by name with `le` last; `# EOF` at the end. Values print in
 * JavaScript's shortest round-trip form (`+Inf`, `-Inf`, `NaN`), timestamps in seconds.
 *
 * Memory: one number per sample plus its scrape index, per series; the text is produced on demand,
 * in chunks, so a long recording is never held as one string unless asked for.
 */
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { formatFloat } from '../exposition/float-text.js';
import { escapeLabelValue } from '../exposition/labels.js';
import { LABEL, SUFFIX } from '../metrics/names.js';

/** A number as OpenMetrics text, round-tripping exactly. */
/** A sample value or timestamp as the recording writes it. */
export const formatValue = formatFloat;

/** OpenMetrics escapes HELP text as it escapes label values: backslash, double quote, newline. */
const escapeHelp = escapeLabelValue;

type LabelValue = string | number;

/** `a="x",b="y",le="0.1"`: sorted by name, `le` last. */
export function formatLabels(labels: Readonly<Record<string, LabelValue | undefined>>): string {
  const names = Object.keys(labels)
    .filter((name) => labels[name] !== undefined && name !== LABEL.le)
    .sort();
  if (labels[LABEL.le] !== undefined) names.push(LABEL.le);
  let out = '';
  for (const name of names) {
    const raw = labels[name]!;
    const text = typeof raw === 'number' ? formatValue(raw) : raw;
    out += `${out === '' ? '' : ','}${name}="${escapeLabelValue(text)}"`;
  }
  return out;
}

type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'unknown';

interface SeriesRecord {
  readonly sampleName: string;
  /** Formatted labels, without braces. */
  readonly labelText: string;
  /** Histograms: the labels without `le`, grouping a labelset's samples. */
  readonly groupKey: string;
  /** Histogram buckets: the bound; otherwise NaN. */
  readonly le: number;
  /** 0 bucket, 1 sum, 2 count (histograms), 0 otherwise. */
  readonly rank: number;
  readonly indices: number[];
  readonly values: number[];
}

interface FamilyRecord {
  readonly name: string;
  readonly type: FamilyType;
  readonly help: string;
  /** By sample name and formatted labels. */
  readonly series: Map<string, SeriesRecord>;
  /** The same series by the registry's label order (a cache; one series may have several keys). */
  readonly byRawKey: Map<string, SeriesRecord>;
}

/** OpenMetrics family name: a counter's without `_total`. */
function familyName(name: string, type: FamilyType): string {
  return type === 'counter' && name.endsWith(SUFFIX.total) ? name.slice(0, -SUFFIX.total.length) : name;
}

function familyType(type: string): FamilyType {
  return type === 'counter' || type === 'gauge' || type === 'histogram' || type === 'summary' ? type : 'unknown';
}

function sampleRank(sampleName: string, family: string, type: FamilyType): number {
  if (type !== 'histogram') return 0;
  if (sampleName === family + SUFFIX.sum) return 1;
  if (sampleName === family + SUFFIX.count) return 2;
  return 0;
}

function leOf(raw: LabelValue | undefined): number {
  if (raw === undefined) return Number.NaN;
  if (typeof raw === 'number') return raw;
  return raw === '+Inf' ? Number.POSITIVE_INFINITY : Number(raw);
}

export interface RecordingTarget {
  /** `job` label of every sample. */
  readonly job: string;
  /** `instance` label of every sample. */
  readonly instance: string;
}

/** Accumulates scrapes of one target and writes them as an OpenMetrics recording. */
export class RecordingStore {
  /** Scrape times, epoch ms. */
  private readonly times: number[] = [];
  private readonly families = new Map<string, FamilyRecord>();
  private readonly targetLabels: Record<string, string>;
  private samples = 0;

  constructor(readonly target: RecordingTarget) {
    this.targetLabels = { [LABEL.job]: target.job, [LABEL.instance]: target.instance };
  }

  get scrapeCount(): number {
    return this.times.length;
  }

  get sampleCount(): number {
    return this.samples;
  }

  get seriesCount(): number {
    let count = 0;
    for (const family of this.families.values()) count += family.series.size;
    return count;
  }

  /** Adds one scrape taken at `timeMs` (epoch ms, later than the previous one). */
  add(timeMs: number, metrics: readonly MetricObjectWithValues<MetricValue<string>>[]): void {
    const last = this.times[this.times.length - 1];
    if (last !== undefined && !(timeMs > last)) throw new RangeError(`scrape at ${timeMs} is not after ${last}`);
    const index = this.times.length;
    this.times.push(timeMs);
    for (const metric of metrics) {
      const type = familyType(String(metric.type));
      const name = familyName(metric.name, type);
      let family = this.families.get(name);
      if (family === undefined) {
        family = { name, type, help: metric.help, series: new Map(), byRawKey: new Map() };
        this.families.set(name, family);
      }
      for (const sample of metric.values) {
        const sampleName = (sample as { metricName?: string }).metricName ?? metric.name;
        const labels = sample.labels as Record<string, LabelValue | undefined>;
        // A cheap identity (label order as the registry gives it, stable per series) finds the series
        // without sorting and escaping its labels on every scrape.
        let key = sampleName;
        for (const name in labels) key += `\u0000${name}\u0001${labels[name]}`;
        let series = family.byRawKey.get(key);
        if (series === undefined) {
          const labelText = formatLabels({ ...labels, ...this.targetLabels });
          series = family.series.get(`${sampleName}{${labelText}`);
        }
        if (series === undefined) {
          const labelText = formatLabels({ ...labels, ...this.targetLabels });
          const rank = sampleRank(sampleName, name, type);
          const isBucket = type === 'histogram' && rank === 0;
          series = {
            sampleName,
            labelText,
            groupKey: isBucket ? formatLabels({ ...labels, [LABEL.le]: undefined, ...this.targetLabels }) : labelText,
            le: isBucket ? leOf(labels[LABEL.le]) : Number.NaN,
            rank,
            indices: [],
            values: [],
          };
          family.series.set(`${sampleName}{${labelText}`, series);
        }
        family.byRawKey.set(key, series);
        series.indices.push(index);
        series.values.push(sample.value);
        this.samples++;
      }
    }
  }

  /** Writes the recording in chunks of about `chunkChars` characters. */
  writeTo(write: (chunk: string) => void, chunkChars = 1 << 16): void {
    let buffer = '';
    const line = (text: string): void => {
      buffer += `${text}\n`;
      if (buffer.length >= chunkChars) {
        write(buffer);
        buffer = '';
      }
    };
    const times = this.times.map((ms) => formatValue(ms / 1000));
    const names = [...this.families.keys()].sort();
    for (const name of names) {
      const family = this.families.get(name)!;
      line(`# HELP ${name} ${escapeHelp(family.help)}`);
      line(`# TYPE ${name} ${family.type}`);
      if (family.type === 'histogram') {
        for (const group of histogramGroups(family)) {
          const count = group[group.length - 1]!;
          // Every sample of a labelset at one timestamp, in bucket order, then _sum and _count.
          const cursors = group.map(() => 0);
          for (const index of count.indices) {
            const ts = times[index]!;
            for (const [i, series] of group.entries()) {
              let at = cursors[i]!;
              while (at < series.indices.length && series.indices[at]! < index) at++;
              cursors[i] = at;
              if (series.indices[at] === index) {
                line(`${series.sampleName}{${series.labelText}} ${formatValue(series.values[at]!)} ${ts}`);
              }
            }
          }
        }
      } else {
        const series = [...family.series.values()].sort((a, b) =>
          compare(a.sampleName + a.labelText, b.sampleName + b.labelText),
        );
        for (const s of series) {
          const head = `${s.sampleName}{${s.labelText}} `;
          for (let i = 0; i < s.indices.length; i++) {
            line(`${head}${formatValue(s.values[i]!)} ${times[s.indices[i]!]}`);
          }
        }
      }
    }
    line('# EOF');
    if (buffer !== '') write(buffer);
  }

  /** The whole recording as one string. */
  text(): string {
    const chunks: string[] = [];
    this.writeTo((chunk) => chunks.push(chunk));
    return chunks.join('');
  }
}

/** A histogram family's series grouped by labelset: buckets by bound, then `_sum`, then `_count`. */
function histogramGroups(family: FamilyRecord): SeriesRecord[][] {
  const groups = new Map<string, SeriesRecord[]>();
  for (const series of family.series.values()) {
    let group = groups.get(series.groupKey);
    if (group === undefined) {
      group = [];
      groups.set(series.groupKey, group);
    }
    group.push(series);
  }
  const sorted: SeriesRecord[][] = [];
  for (const key of [...groups.keys()].sort(compare)) {
    const group = groups.get(key)!;
    group.sort((a, b) => a.rank - b.rank || a.le - b.le);
    if (group[group.length - 1]!.rank === 2) sorted.push(group);
  }
  return sorted;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * One scrape as OpenMetrics text (no timestamps), for a live `/metrics` asked for
 * `application/openmetrics-text`.
 */
export function formatOpenMetrics(metrics: readonly MetricObjectWithValues<MetricValue<string>>[]): string {
  const lines: string[] = [];
  const sorted = [...metrics].sort((a, b) => compare(a.name, b.name));
  for (const metric of sorted) {
    const type = familyType(String(metric.type));
    const name = familyName(metric.name, type);
    lines.push(`# HELP ${name} ${escapeHelp(metric.help)}`);
    lines.push(`# TYPE ${name} ${type}`);
    for (const sample of metric.values) {
      const sampleName = (sample as { metricName?: string }).metricName ?? metric.name;
      const labelText = formatLabels(sample.labels as Record<string, LabelValue | undefined>);
      lines.push(`${sampleName}${labelText === '' ? '' : `{${labelText}}`} ${formatValue(sample.value)}`);
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

/** OpenMetrics and Prometheus text content types, as a live `/metrics` negotiates them. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
