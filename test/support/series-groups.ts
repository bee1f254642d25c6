/**
 * Groups a page's series the way a reader thinks of them: one group per family and label set,
 * with a histogram's buckets, `_sum`, `_count` and `_created` together (labels minus `le`), a
 * summary's quantiles with its `_sum`/`_count` (labels minus `quantile`), and a counter's `_total`
 * with its `_created`. Values are series ids into the page's series table.
 */

import { floatError, readFloat } from '../../src/exposition/float-text.js';
import { type Labels, withoutLabels } from '../../src/exposition/labels.js';
import type { MetricFamily, ParsedPage } from '../../src/exposition/parsed-page.js';
import { LABEL } from '../../src/metrics/names.js';

export interface BoundSeries {
  /** `le` of a bucket or `quantile` of a summary, as a number (`+Inf` for the last bucket). */
  readonly bound: number;
  readonly series: number;
}

export interface SeriesGroup {
  readonly family: MetricFamily;
  /** Labels shared by the group (without `le` / `quantile`). */
  readonly labels: Labels;
  /** The plain sample: a gauge, an untyped sample, a counter's `_total` (or bare name in the text format). */
  readonly value: number | undefined;
  /** Histogram buckets sorted by bound; empty for other types. */
  readonly buckets: readonly BoundSeries[];
  /** Summary quantiles sorted by quantile; empty for other types. */
  readonly quantiles: readonly BoundSeries[];
  readonly sum: number | undefined;
  readonly count: number | undefined;
  readonly created: number | undefined;
}

interface Builder {
  family: MetricFamily;
  labels: Labels;
  value: number | undefined;
  buckets: BoundSeries[];
  quantiles: BoundSeries[];
  sum: number | undefined;
  count: number | undefined;
  created: number | undefined;
}

/** Groups of every family kept in the page, in order of first appearance. Bounds that are not numbers are left out. */
export function groupSeries(page: ParsedPage): SeriesGroup[] {
  const groups = new Map<string, Builder>();
  for (let id = 0; id < page.series.count; id++) {
    const fi = page.series.families[id] as number;
    const family = page.families[fi];
    if (family === undefined) continue;
    const name = page.series.name(id);
    const suffix = name.slice(family.name.length);
    const labels = page.series.labels(id);
    const isHistogram = family.type === 'histogram' || family.type === 'gaugehistogram';
    const isSummary = family.type === 'summary';
    const boundLabel =
      isHistogram && suffix === '_bucket' ? LABEL.le : isSummary && suffix === '' ? LABEL.quantile : undefined;
    const groupLabels = isHistogram || isSummary ? withoutLabels(labels, [LABEL.le, LABEL.quantile]) : labels;
    const key = `${fi}\u0000${JSON.stringify(Object.entries(groupLabels))}`;
    let g = groups.get(key);
    if (g === undefined) {
      g = {
        family,
        labels: groupLabels,
        value: undefined,
        buckets: [],
        quantiles: [],
        sum: undefined,
        count: undefined,
        created: undefined,
      };
      groups.set(key, g);
    }
    if (boundLabel !== undefined) {
      const text = labels[boundLabel];
      if (text === undefined) continue;
      const bound = readFloat(text, 0, text.length);
      if (floatError !== undefined) continue;
      (isHistogram ? g.buckets : g.quantiles).push({ bound, series: id });
    } else if (suffix === '_sum' || suffix === '_gsum') {
      g.sum = id;
    } else if (suffix === '_count' || suffix === '_gcount') {
      g.count = id;
    } else if (suffix === '_created') {
      g.created = id;
    } else {
      g.value = id;
    }
  }
  const out: SeriesGroup[] = [];
  for (const g of groups.values()) {
    g.buckets.sort((a, b) => a.bound - b.bound);
    g.quantiles.sort((a, b) => a.bound - b.bound);
    out.push(g);
  }
  return out;
}
