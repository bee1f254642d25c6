/**
 * Where the engine gets its numbers: a `DiagnosisBackend` (declared in `promql/backend.ts`). Two
 * implementations: in-process over the scraped or replayed history (`store/backend.ts`), and a
 * Prometheus-compatible HTTP API that evaluates the rendered PromQL on the server
 * (`prometheus/prometheus-backend.ts`). What the engine adds on top of either lives here.
 */

import type { DiagnosisBackend } from '../promql/backend.js';
import type { Expr } from '../promql/expr.js';
import type { InstantVector } from '../promql/vector.js';

export type { DiagnosisBackend };

/**
 * The shortest run of `times` (ascending, evenly spaced) that holds every time for which `lacking` is true, or
 * none: a backend's `evaluate` takes evenly spaced times (a remote one asks one range query for them).
 */
export function runCovering(times: readonly number[], lacking: (t: number) => boolean): readonly number[] {
  const first = times.findIndex(lacking);
  return first < 0 ? [] : times.slice(first, times.findLastIndex(lacking) + 1);
}

/** `backend.evaluateBatch`, or each expression evaluated on its own where the backend has no batches. */
export function evaluateBatch(
  backend: DiagnosisBackend,
  exprs: readonly Expr[],
  timesMs: readonly number[],
  signal?: AbortSignal,
): Promise<InstantVector[][]> {
  if (exprs.length === 0 || timesMs.length === 0) return Promise.resolve(exprs.map(() => []));
  if (backend.evaluateBatch !== undefined) return backend.evaluateBatch(exprs, timesMs, signal);
  return Promise.all(exprs.map((expr) => backend.evaluate(expr, timesMs, signal)));
}

/**
 * `inner` with every vector remembered by expression and time: for data that no longer changes (a
 * recording judged at many times, where each evaluation's `for` steps overlap the previous one's). Not for
 * a live history, whose recent vectors change as samples arrive. Keys are the expression's JSON: signal and
 * threshold nodes add their ids and names, so equal keys still mean equal computations (two trees that differ
 * only in names are computed twice, never confused).
 */
export function memoizedBackend(inner: DiagnosisBackend): DiagnosisBackend {
  const keys = new WeakMap<Expr, string>();
  /** Vectors by expression key, then by time: the key (an expression's JSON, often kilobytes) is hashed once. */
  const vectors = new Map<string, Map<number, InstantVector>>();
  const keyOf = (expr: Expr): string => {
    let key = keys.get(expr);
    if (key === undefined) {
      key = JSON.stringify(expr);
      keys.set(expr, key);
    }
    return key;
  };
  const vectorsOf = (key: string): Map<number, InstantVector> => {
    let byTime = vectors.get(key);
    if (byTime === undefined) {
      byTime = new Map();
      vectors.set(key, byTime);
    }
    return byTime;
  };
  const batch = async (
    exprs: readonly Expr[],
    timesMs: readonly number[],
    signal?: AbortSignal,
  ): Promise<InstantVector[][]> => {
    const known = exprs.map((expr) => vectorsOf(keyOf(expr)));
    const due = exprs.filter((_, i) => timesMs.some((t) => !known[i]?.has(t)));
    if (due.length > 0) {
      const dueVectors = due.map((expr) => vectorsOf(keyOf(expr)));
      const missing = runCovering(timesMs, (t) => dueVectors.some((byTime) => !byTime.has(t)));
      const computed = await evaluateBatch(inner, due, missing, signal);
      dueVectors.forEach((byTime, i) => {
        missing.forEach((t, j) => {
          byTime.set(t, computed[i]?.[j] ?? []);
        });
      });
    }
    return known.map((byTime) => timesMs.map((t) => byTime.get(t) ?? []));
  };
  // The inner backend's change watermark, so that an `EvaluationMemory` keeps its steps across evaluations.
  const changes = inner.changes?.bind(inner);
  return {
    evaluate: async (expr, timesMs, signal) => (await batch([expr], timesMs, signal))[0] ?? [],
    evaluateBatch: batch,
    ...(inner.stepCost === undefined ? {} : { stepCost: inner.stepCost }),
    seriesLabels: (metric, fromMs, toMs, signal) => inner.seriesLabels(metric, fromMs, toMs, signal),
    ...(changes === undefined ? {} : { changes }),
  };
}
