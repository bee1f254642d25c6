/**
 * What the diagnosis needs to get its numbers: evaluate an expression at given times and list the series of
 * a metric. Defined here, with the expressions and vectors it speaks of, so the backends (the in-process
 * store, a Prometheus-compatible API) implement it without importing the diagnosis layer.
 */
import type { ChangeReader } from '../store/change-watermarks.js';
import type { Expr } from './expr.js';
import type { InstantVector, Labels } from './vector.js';

export type { ChangeReader };

/**
 * Every call takes an optional `signal`: once it is aborted, the call rejects soon (with the signal's reason, or
 * the backend's own abort error) instead of finishing its work, so a stopping service does not wait for an
 * evaluation. An in-process backend also yields to the event loop during long calls.
 */
export interface DiagnosisBackend {
  /** The vector of `expr` at each of `timesMs` (ascending, evenly spaced when more than one). */
  evaluate(expr: Expr, timesMs: readonly number[], signal?: AbortSignal): Promise<InstantVector[]>;
  /** Label sets (with `__name__`) of the series of `metric` that have samples in `(fromMs, toMs]`. */
  seriesLabels(metric: string, fromMs: number, toMs: number, signal?: AbortSignal): Promise<Labels[]>;
  /**
   * The vectors of several expressions at the same times, `[expression][time]`, as `evaluate` gives them one by
   * one. Backends that can share work between the expressions (subexpressions computed once per time) offer it.
   */
  evaluateBatch?(exprs: readonly Expr[], timesMs: readonly number[], signal?: AbortSignal): Promise<InstantVector[][]>;
  /**
   * What more times cost in one call. `shared` (the default; an in-process backend): neighbouring times read their
   * windows from one history, so a batch over one run of steps from the earliest `for` start costs little more
   * than each condition over its own steps. `per-time` (a remote server): every time is computed anew, so each
   * condition is best asked over its own steps only, and conditions lacking the same steps in one batch.
   */
  readonly stepCost?: 'shared' | 'per-time';
  /**
   * A reader of the earliest sample time written to the backend's data since the reader last asked: what was
   * evaluated at earlier times still holds. Backends whose data changes without telling (a remote Prometheus)
   * offer none, and nothing evaluated over them is kept.
   */
  changes?(): ChangeReader;
  /**
   * Where the backend's numbers are exact on the grid of `stepMs`: the offset (0 ≤ offset < `stepMs`) from the
   * multiples of `stepMs` of the times its data was computed at, as of `atMs`. A Prometheus read through its
   * recorded series answers at its rule group's evaluations, which Prometheus offsets from the multiples of the
   * interval by a phase of the group's own; every other backend is exact at any time (no method, or 0).
   */
  gridPhase?(stepMs: number, atMs: number, signal?: AbortSignal): Promise<number>;
}
