/**
 * A range function over the in-process history, computed the way src computes it: the store selects
 * the series and their samples in the window `[atMs - windowMs, atMs]` (`History.select`), and
 * src/promql applies the function (`rangeOverSeries`, as the evaluator does).
 */
import type { LabelMatcher } from '../../src/exposition/labels.js';
import { type RangeFunctionName, type RangeResult, rangeOverSeries } from '../../src/promql/functions.js';
import type { History } from '../../src/store/history.js';

/** `fn(metric{matchers}[windowMs])` at `atMs` over every target; `insufficient` names series with too few points. */
export function rangeOver(
  history: History,
  fn: RangeFunctionName,
  metric: string,
  matchers: readonly LabelMatcher[],
  atMs: number,
  windowMs: number,
): RangeResult {
  return rangeOverSeries(fn, history.select({ metric, matchers }, atMs - windowMs, atMs), atMs, windowMs);
}
