/**
 * A range function over the in-process history, computed the way src computes it: the store selects
 * the series and their samples in the window `[atMs - windowMs, atMs]` (`History.select`), and
 * src/promql applies the function (`rangeOverSeries`, as the evaluator does).
 */
import type { LabelMatcher } from '../../src/exposition/labels.js';
import { evaluate } from '../../src/promql/evaluate.js';
import type { Expr } from '../../src/promql/expr.js';
import { type RangeFunctionName, type RangeResult, rangeOverSeries } from '../../src/promql/functions.js';
import { historyStore } from '../../src/promql/history-backend.js';
import type { InstantVector } from '../../src/promql/vector.js';
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

/** `expr` at `atMs`, evaluated over the history as the service evaluates it. */
export function evaluateOver(history: History, expr: Expr, atMs: number): InstantVector {
  return evaluate(expr, historyStore(history), atMs);
}
