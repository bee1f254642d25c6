/**
 * Where the engine gets its numbers. Two implementations: in-process over the scraped or replayed history
 * (`createStoreBackend`), and a Prometheus-compatible HTTP API that evaluates the rendered PromQL on the server.
 */

import { evaluate, type SeriesStore } from '../promql/evaluate.js';
import type { Expr } from '../promql/expr.js';
import { type InstantVector, type Labels, METRIC_NAME_LABEL } from '../promql/vector.js';
import type { History } from '../store/history.js';

export interface DiagnosisBackend {
  /** The vector of `expr` at each of `timesMs` (ascending, evenly spaced when more than one). */
  evaluate(expr: Expr, timesMs: readonly number[]): Promise<InstantVector[]>;
  /** Label sets (with `__name__`) of the series of `metric` that have samples in `(fromMs, toMs]`. */
  seriesLabels(metric: string, fromMs: number, toMs: number): Promise<Labels[]>;
}

/** A store that can also list series, as the in-process history does. */
export interface ListableSeriesStore extends SeriesStore {
  seriesLabels(metric: string, fromMs: number, toMs: number): Labels[];
}

export function createStoreBackend(store: ListableSeriesStore): DiagnosisBackend {
  return {
    async evaluate(expr, timesMs) {
      return timesMs.map((t) => evaluate(expr, store, t));
    },
    async seriesLabels(metric, fromMs, toMs) {
      return store.seriesLabels(metric, fromMs, toMs);
    },
  };
}

/** The in-process history seen as a store the engine can list and evaluate (structural: no copy). */
export function historyStore(history: History): ListableSeriesStore {
  return {
    instant: (metric, matchers, atMs) => history.instant(metric, matchers, atMs),
    select: (metric, matchers, startMs, endMs) => history.select({ metric, matchers }, startMs, endMs),
    seriesLabels(metric, fromMs, toMs) {
      return history
        .select({ metric }, fromMs, toMs)
        .filter((view) => view.t.length > 0)
        .map((view) => ({ ...view.labels, [METRIC_NAME_LABEL]: view.name }));
    },
  };
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
  const vectors = new Map<string, InstantVector>();
  const keyOf = (expr: Expr): string => {
    let key = keys.get(expr);
    if (key === undefined) {
      key = JSON.stringify(expr);
      keys.set(expr, key);
    }
    return key;
  };
  return {
    async evaluate(expr, timesMs) {
      const key = keyOf(expr);
      const missing = timesMs.filter((t) => !vectors.has(`${t} ${key}`));
      if (missing.length > 0) {
        const computed = await inner.evaluate(expr, missing);
        missing.forEach((t, i) => {
          vectors.set(`${t} ${key}`, computed[i] ?? []);
        });
      }
      return timesMs.map((t) => vectors.get(`${t} ${key}`) ?? []);
    },
    seriesLabels: (metric, fromMs, toMs) => inner.seriesLabels(metric, fromMs, toMs),
  };
}
