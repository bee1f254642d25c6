/**
 * Limits on what one scraped page may bring into the history: like Prometheus's `label_limit` and
 * `label_value_length_limit` (the parser checks them on the kept families as it reads: `maxLabels`,
 * `maxLabelValueLength`, and the length of a whole label set, `maxLabelSetLength`), and a bound on the work queues
 * one target may expose (each queue is evaluated on every evaluation).
 *
 * Contract: `queueLimitViolation` counts the work queues of a parsed page exactly as the engine finds them in the
 * history: every series of a queue family (`QueueKeying.families`: depth and adds), keyed by `QueueKeying.key` of
 * its labels with the target's applied (as the history stores them). It returns `queue_limit` with a message naming
 * the limit and the setting that raises it when the page has more queues than the limit, or `undefined`; it costs
 * one label decoding per series of those families. `labelLimitDetail` turns the parser's label-limit reason into
 * the message a target's error shows, with the setting that raises the limit.
 */
import { LABEL_LIMIT_REASON } from '../exposition/label-set-scanner.js';
import type { Labels } from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import type { QueueKeying } from '../store/held-limits.js';
import { applyTargetLabels } from '../store/target-labels.js';
import { SCRAPE_LIMIT_SETTINGS } from './limit-settings.js';

export {
  DEFAULT_SCRAPE_LABEL_LIMIT,
  DEFAULT_SCRAPE_LABEL_VALUE_LIMIT,
  DEFAULT_SCRAPE_QUEUE_LIMIT,
} from '../scrape/scrape-settings.js';

export interface PageLimits {
  readonly labelValueLimit: number;
  readonly labelLimit: number;
  readonly labelSetLengthLimit: number;
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
    ? SCRAPE_LIMIT_SETTINGS.labelValueLimit
    : / characters together/.test(detail)
      ? SCRAPE_LIMIT_SETTINGS.labelSetLengthLimit
      : SCRAPE_LIMIT_SETTINGS.labelLimit;
  return `a series has ${detail} (${setting}); the page was not stored`;
}

/** More work queues on the page than `queueLimit`, counted as the engine keys them (see the module contract). */
export function queueLimitViolation(
  page: ParsedPage,
  queueLimit: number,
  keying: QueueKeying,
  targetLabels: Labels,
): PageLimitViolation | undefined {
  const families = new Set(keying.families);
  const ofQueues = page.families.map((family) => families.has(family.name));
  const pageFamilies = page.series.families;
  const queues = new Set<string>();
  for (let id = 0; id < page.series.count; id++) {
    if (ofQueues[pageFamilies[id] as number] !== true) continue;
    queues.add(keying.key(applyTargetLabels(page.series.labels(id), targetLabels)));
    if (queues.size > queueLimit) {
      return {
        code: 'queue_limit',
        message: `more than ${queueLimit} work queues (the target's queue limit, ${SCRAPE_LIMIT_SETTINGS.queueLimit})`,
      };
    }
  }
  return undefined;
}
