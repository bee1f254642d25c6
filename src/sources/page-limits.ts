/**
 * Limits on what one scraped page may bring into the history: like Prometheus's `label_limit` and
 * `label_value_length_limit` (the parser checks them on the kept families as it reads: `maxLabels`,
 * `maxLabelValueLength`), and a bound on the work queues one target may expose (each queue is evaluated on every
 * evaluation).
 *
 * Contract: `queueLimitViolation` reads the depth series of a parsed page and returns `queue_limit` with a message
 * naming the limit and the setting that raises it when the page has too many queues, or `undefined`; it costs one
 * label decoding per queue's depth series. `labelLimitDetail` turns the parser's label-limit reason into the
 * message a target's error shows, with the setting that raises the limit.
 */
import { LABEL_LIMIT_REASON } from '../exposition/label-set-scanner.js';
import { labelValue } from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { LABEL, WORKQUEUE } from '../metrics/names.js';

export {
  DEFAULT_SCRAPE_LABEL_LIMIT,
  DEFAULT_SCRAPE_LABEL_VALUE_LIMIT,
  DEFAULT_SCRAPE_QUEUE_LIMIT,
} from '../scrape/scrape-settings.js';

export interface PageLimits {
  readonly labelValueLimit: number;
  readonly labelLimit: number;
  readonly queueLimit: number;
}

export interface PageLimitViolation {
  readonly code: 'queue_limit';
  /** What is over which limit, and the setting that raises it; without the target (the caller prefixes it). */
  readonly message: string;
}

/** The message of the parser's label-limit error `reason` (see `LABEL_LIMIT_REASON`), with the setting to raise. */
export function labelLimitDetail(reason: string): string {
  const detail = reason.slice(LABEL_LIMIT_REASON.length).trim();
  const setting = / label of \d+ characters/.test(detail)
    ? 'scrape.labelValueLimit or WQD_SCRAPE_LABEL_VALUE_LIMIT'
    : 'scrape.labelLimit or WQD_SCRAPE_LABEL_LIMIT';
  return `a series has ${detail} (${setting}); the page was not stored`;
}

/** More distinct queue names among the depth series (one per queue, one per priority) than `queueLimit`. */
export function queueLimitViolation(page: ParsedPage, queueLimit: number): PageLimitViolation | undefined {
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
