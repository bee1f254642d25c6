/**
 * Limits on what one scraped page may bring into the history, beyond the parser's own (bytes, and series of the
 * kept families: `maxSeries`), like Prometheus's `label_limit` and `label_value_length_limit`, plus a bound on
 * the work queues one target may expose (each queue is evaluated on every evaluation).
 *
 * Contract: `pageLimitViolation` reads only the kept series of a parsed page and returns the first limit the
 * page breaks (`label_limit`: too many labels on a series, or a label value too long; `queue_limit`: too many
 * queues), with a message naming the series or the count, the limit and the setting that raises it; or
 * `undefined`. A page of ordinary series costs a length comparison per series plus one label decoding per
 * queue's depth series.
 */
import { keyLabels, keyMetricName, labelValue } from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { LABEL, WORKQUEUE } from '../metrics/names.js';

/**
 * Longest label value accepted in a kept series, in characters, like Prometheus's `label_value_length_limit`:
 * queue, controller and target names are short; a huge value would be stored in every sample's series and
 * carried into ids and reports.
 */
export const DEFAULT_SCRAPE_LABEL_VALUE_LIMIT = 1024;
/**
 * Most labels on one kept series (before the target's own are added), like Prometheus's `label_limit`: the
 * work-queue, controller-runtime and REST-client series carry one to five.
 */
export const DEFAULT_SCRAPE_LABEL_LIMIT = 30;
/**
 * Most work queues on one target: a controller process runs one queue per controller, a few dozen even in
 * kube-controller-manager; 250 queues and their series (about 35 each, 47 with controller-runtime's) fit the
 * default series limit.
 */
export const DEFAULT_SCRAPE_QUEUE_LIMIT = 250;

export interface PageLimits {
  readonly labelValueLimit: number;
  readonly labelLimit: number;
  readonly queueLimit: number;
}

export interface PageLimitViolation {
  readonly code: 'label_limit' | 'queue_limit';
  /** What is over which limit, and the setting that raises it; without the target (the caller prefixes it). */
  readonly message: string;
}

export function pageLimitViolation(page: ParsedPage, limits: PageLimits): PageLimitViolation | undefined {
  return labelViolation(page, limits) ?? queueViolation(page, limits.queueLimit);
}

/**
 * A series with more labels than `labelLimit`, or a value longer than `labelValueLimit`. Only keys long enough
 * to hold either (`a=""` per label at least, or the value itself) are decoded.
 */
function labelViolation(page: ParsedPage, limits: PageLimits): PageLimitViolation | undefined {
  const { labelLimit, labelValueLimit } = limits;
  const shortestOverCount = 4 * (labelLimit + 1);
  for (let id = 0; id < page.series.count; id++) {
    const length = page.series.keyLength(id);
    if (length <= labelValueLimit && length < shortestOverCount) continue;
    const key = page.series.key(id);
    const labels = Object.entries(keyLabels(key));
    if (labels.length > labelLimit) {
      return {
        code: 'label_limit',
        message: `series ${keyMetricName(key)} has ${labels.length} labels, over the limit of ${labelLimit} (scrape.labelLimit or WQD_SCRAPE_LABEL_LIMIT)`,
      };
    }
    for (const [label, value] of labels) {
      if (value.length <= labelValueLimit) continue;
      return {
        code: 'label_limit',
        message: `series ${keyMetricName(key)} has a ${label} label of ${value.length} characters, over the limit of ${labelValueLimit} (scrape.labelValueLimit or WQD_SCRAPE_LABEL_VALUE_LIMIT)`,
      };
    }
  }
  return undefined;
}

/** More distinct queue names among the depth series (one per queue, one per priority) than `queueLimit`. */
function queueViolation(page: ParsedPage, queueLimit: number): PageLimitViolation | undefined {
  const depthFamily = page.families.findIndex((family) => family.name === WORKQUEUE.depth);
  if (depthFamily < 0) return undefined;
  const names = new Set<string>();
  const families = page.series.families;
  for (let id = 0; id < page.series.count; id++) {
    if (families[id] !== depthFamily) continue;
    names.add(labelValue(page.series.labels(id), LABEL.name) ?? '');
    if (names.size > queueLimit) {
      return {
        code: 'queue_limit',
        message: `more than ${queueLimit} work queues (the target's queue limit, scrape.queueLimit or WQD_SCRAPE_QUEUE_LIMIT)`,
      };
    }
  }
  return undefined;
}
