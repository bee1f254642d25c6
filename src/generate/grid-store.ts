/**
 * promtool's input series as the PromQL evaluator's `SeriesStore`: each series' values at `step × interval`
 * from time 0 (a step without a value has no sample), in Prometheus's storage order (label sets compared
 * name by name, `__name__` included), so the evaluator computes what promtool's Prometheus computes over
 * the same test. Instant selectors look back 5 minutes, both ends of a range included (Prometheus 2.x).
 */
import { compileMatchers, type LabelMatcher, type Labels } from '../exposition/labels.js';
import type { SeriesPoints, SeriesStore } from '../promql/evaluate.js';
import { METRIC_NAME_LABEL } from '../promql/vector.js';
import type { GridSeries } from './promtool-tests.js';

const LOOKBACK_MS = 5 * 60_000;

type StoredSeries = { readonly name: string; readonly labels: Labels; readonly t: number[]; readonly v: number[] };

export function gridStore(series: readonly GridSeries[], intervalMs: number): SeriesStore {
  const stored = series
    .map((s): StoredSeries => {
      const t: number[] = [];
      const v: number[] = [];
      s.values.forEach((value, step) => {
        if (value === undefined) return;
        t.push(step * intervalMs);
        v.push(value);
      });
      return { name: s.name, labels: s.labels, t, v };
    })
    .sort((a, b) =>
      compareLabelSets({ ...a.labels, [METRIC_NAME_LABEL]: a.name }, { ...b.labels, [METRIC_NAME_LABEL]: b.name }),
    );
  const selected = (metric: string, matchers: readonly LabelMatcher[]): StoredSeries[] => {
    const match = compileMatchers(matchers);
    return stored.filter((s) => s.name === metric && match(s.labels));
  };
  return {
    instant(metric, matchers, atMs) {
      const out = [];
      for (const s of selected(metric, matchers)) {
        const i = lastIndexAtOrBefore(s.t, atMs);
        if (i < 0 || (s.t[i] as number) < atMs - LOOKBACK_MS) continue;
        out.push({ labels: { ...s.labels, [METRIC_NAME_LABEL]: s.name }, value: s.v[i] as number });
      }
      return out;
    },
    select(metric, matchers, startMs, endMs) {
      const out: SeriesPoints[] = [];
      for (const s of selected(metric, matchers)) {
        const from = lastIndexAtOrBefore(s.t, startMs - 1) + 1;
        const to = lastIndexAtOrBefore(s.t, endMs) + 1;
        out.push({ labels: s.labels, t: s.t.slice(from, to), v: s.v.slice(from, to) });
      }
      return out;
    },
  };
}

/** The index of the last time at or before `atMs`, -1 when none. */
function lastIndexAtOrBefore(times: readonly number[], atMs: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((times[mid] as number) <= atMs) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Prometheus's `labels.Compare`: label pairs sorted by name, compared name then value, shorter first. */
function compareLabelSets(a: Labels, b: Labels): number {
  const pa = Object.entries(a).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  const pb = Object.entries(b).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const [na, va] = pa[i] as [string, string];
    const [nb, vb] = pb[i] as [string, string];
    if (na !== nb) return na < nb ? -1 : 1;
    if (va !== vb) return va < vb ? -1 : 1;
  }
  return pa.length - pb.length;
}
