/**
 * What the diagnosis needs to get its numbers: evaluate an expression at given times and list the series of
 * a metric. Defined here, with the expressions and vectors it speaks of, so the backends (the in-process
 * store, a Prometheus-compatible API) implement it without importing the diagnosis layer.
 */
import type { Expr } from './expr.js';
import type { InstantVector, Labels } from './vector.js';

export interface DiagnosisBackend {
  /** The vector of `expr` at each of `timesMs` (ascending, evenly spaced when more than one). */
  evaluate(expr: Expr, timesMs: readonly number[]): Promise<InstantVector[]>;
  /** Label sets (with `__name__`) of the series of `metric` that have samples in `(fromMs, toMs]`. */
  seriesLabels(metric: string, fromMs: number, toMs: number): Promise<Labels[]>;
}
