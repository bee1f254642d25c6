/**
 * A history written out as a recording: OpenMetrics text with a timestamp on every sample, the format
 * `readRecording` reads back (and `promtool tsdb create-blocks-from openmetrics` imports), so that a live
 * window scraped by `diagnose --target --record FILE` can be diagnosed again from the file.
 *
 * Contract:
 * - Every sample held (stale markers are not samples and are left out) is written once, with the series'
 *   labels as stored (the target's `job` and `instance` included), sorted by name with `le` last.
 * - Families are inferred from the sample names, as the diagnostic families are named: `<f>_bucket` with
 *   an `le` label plus `<f>_sum` and `<f>_count` form a histogram `<f>`, a `quantile` label a summary,
 *   `<f>_total` a counter `<f>`, anything else a gauge. Each family appears once with its `# TYPE`; within a
 *   family, series are in storage order and a histogram's buckets, sum and count of one label set are
 *   grouped per timestamp. The text ends with `# EOF`.
 * - Each target's scrape log is written as Prometheus's `up{<target labels>}` family (1 scraped, 0 failed),
 *   so that a replay knows the scrapes and marks stale what the live history marked stale.
 * - Values print in their shortest round-trip form, timestamps in seconds with millisecond precision.
 */
import { formatFloat } from '../exposition/float-text.js';
import { escapeLabelValue, type Labels } from '../exposition/labels.js';
import { SCRAPE_HEALTH } from '../metrics/names.js';
import type { History } from './history.js';

type Row = { readonly t: number; readonly rank: number; readonly le: number; readonly text: string };

/** The whole history as recording text. */
export function historyToRecording(history: History): string {
  const names = history.metricNames();
  const held = new Set(names);
  const families = new Map<string, { type: string; names: string[] }>();
  const familyOf = (name: string): { family: string; type: string } => {
    for (const suffix of ['_bucket', '_sum', '_count']) {
      if (!name.endsWith(suffix)) continue;
      const base = name.slice(0, -suffix.length);
      if (held.has(`${base}_bucket`)) return { family: base, type: 'histogram' };
      if (isSummary(history, base)) return { family: base, type: 'summary' };
    }
    if (isSummary(history, name)) return { family: name, type: 'summary' };
    if (name.endsWith('_total')) return { family: name.slice(0, -'_total'.length), type: 'counter' };
    return { family: name, type: 'gauge' };
  };
  for (const name of names) {
    const { family, type } = familyOf(name);
    const entry = families.get(family) ?? { type, names: [] };
    entry.names.push(name);
    families.set(family, entry);
  }
  const scrapeLog = held.has(SCRAPE_HEALTH.up) ? '' : scrapeLogText(history);
  if (scrapeLog !== '') families.set(SCRAPE_HEALTH.up, { type: 'gauge', names: [] });
  let out = '';
  for (const family of [...families.keys()].sort()) {
    const { type, names: sampleNames } = families.get(family)!;
    out += `# TYPE ${family} ${type}\n`;
    if (family === SCRAPE_HEALTH.up && scrapeLog !== '') out += scrapeLog;
    // Rows grouped by label set (without `le`), in the order the groups first appear.
    const groups = new Map<string, Row[]>();
    for (const name of sampleNames) {
      const rank = name.endsWith('_bucket') ? 0 : name.endsWith('_sum') ? 1 : name.endsWith('_count') ? 2 : 0;
      for (const series of history.select({ metric: name })) {
        const le = series.labels['le'];
        const group = labelText(series.labels, false);
        const rows = groups.get(group) ?? [];
        groups.set(group, rows);
        const prefix = `${name}{${labelText(series.labels, true)}} `;
        for (let i = 0; i < series.t.length; i++) {
          const t = series.t[i] as number;
          rows.push({
            t,
            rank,
            le: bucketBound(le),
            text: `${prefix}${formatFloat(series.v[i] as number)} ${formatFloat(t / 1000)}\n`,
          });
        }
      }
    }
    for (const rows of groups.values()) {
      rows.sort((a, b) => a.t - b.t || a.rank - b.rank || a.le - b.le);
      for (const row of rows) out += row.text;
    }
  }
  return `${out}# EOF\n`;
}

/** The scrape logs of every target as `up` sample lines, in time order per target. */
function scrapeLogText(history: History): string {
  let out = '';
  for (const target of history.targets()) {
    const { times, up } = history.scrapes(target.id);
    const prefix = `${SCRAPE_HEALTH.up}{${labelText(target.labels, false)}} `;
    for (let i = 0; i < times.length; i++) {
      out += `${prefix}${formatFloat(up[i] as number)} ${formatFloat((times[i] as number) / 1000)}\n`;
    }
  }
  return out;
}

/** A bucket's `le` as a number (`+Inf` included); 0 for a series without one. */
function bucketBound(le: string | undefined): number {
  if (le === undefined) return 0;
  if (le === '+Inf' || le === 'Inf') return Number.POSITIVE_INFINITY;
  const n = Number(le);
  return Number.isNaN(n) ? 0 : n;
}

function isSummary(history: History, name: string): boolean {
  return history.select({ metric: name }).some((s) => s.labels['quantile'] !== undefined);
}

/** `a="x",b="y",le="0.1"`: sorted by name, `le` last (or left out). */
function labelText(labels: Labels, withLe: boolean): string {
  const names = Object.keys(labels)
    .filter((n) => n !== 'le')
    .sort();
  if (withLe && labels['le'] !== undefined) names.push('le');
  return names.map((n) => `${n}="${escapeLabelValue(labels[n] as string)}"`).join(',');
}
