/**
 * Where the engine gets its numbers. Two implementations: in-process over the scraped or replayed history
 * (`createStoreBackend`), and a Prometheus-compatible HTTP API that evaluates the rendered PromQL on the server.
 */
import { evaluate, type SeriesStore } from './evaluate.js';
import type { Expr } from './expr.js';
import type { InstantVector, Labels } from './vector.js';

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
