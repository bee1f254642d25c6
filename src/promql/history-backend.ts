/**
 * The in-process history as a `DiagnosisBackend`: every expression evaluated over the scraped or replayed
 * history by the PromQL evaluator.
 */

import type { History } from '../store/history.js';
import type { DiagnosisBackend } from './backend.js';
import { evaluate, type SeriesStore } from './evaluate.js';
import { type Labels, METRIC_NAME_LABEL } from './vector.js';

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
