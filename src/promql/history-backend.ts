/**
 * The in-process history as a `DiagnosisBackend`: every expression evaluated over the scraped or replayed
 * history by the PromQL evaluator. A batch is evaluated one time after another, each time's signals computed
 * once for every expression that reads them; the history's change watermarks tell callers what still holds.
 */

import type { ChangeReader } from '../store/change-watermarks.js';
import type { History } from '../store/history.js';
import type { DiagnosisBackend } from './backend.js';
import { evaluate, type SeriesStore, type SubtreeMemo } from './evaluate.js';
import type { Expr } from './expr.js';
import { type InstantVector, type Labels, METRIC_NAME_LABEL } from './vector.js';

/** A store that can also list series, as the in-process history does. */
export interface ListableSeriesStore extends SeriesStore {
  seriesLabels(metric: string, fromMs: number, toMs: number): Labels[];
  changes?(): ChangeReader;
}

export function createStoreBackend(store: ListableSeriesStore): DiagnosisBackend {
  const evaluateBatch = async (exprs: readonly Expr[], timesMs: readonly number[]): Promise<InstantVector[][]> => {
    const out = exprs.map(() => new Array<InstantVector>(timesMs.length));
    timesMs.forEach((t, timeIndex) => {
      const memo: SubtreeMemo = new Map();
      exprs.forEach((expr, exprIndex) => {
        (out[exprIndex] as InstantVector[])[timeIndex] = evaluate(expr, store, t, memo);
      });
    });
    return out;
  };
  const changes = store.changes?.bind(store);
  return {
    async evaluate(expr, timesMs) {
      return (await evaluateBatch([expr], timesMs))[0] ?? [];
    },
    evaluateBatch,
    async seriesLabels(metric, fromMs, toMs) {
      return store.seriesLabels(metric, fromMs, toMs);
    },
    ...(changes === undefined ? {} : { changes }),
  };
}

/** The in-process history seen as a store the engine can list and evaluate (structural: no copy). */
export function historyStore(history: History): ListableSeriesStore {
  return {
    instant: (metric, matchers, atMs) => history.instant(metric, matchers, atMs),
    changes: () => history.changes(),
    select: (metric, matchers, startMs, endMs) => history.select({ metric, matchers }, startMs, endMs),
    seriesLabels(metric, fromMs, toMs) {
      return history
        .select({ metric }, fromMs, toMs)
        .filter((view) => view.t.length > 0)
        .map((view) => ({ ...view.labels, [METRIC_NAME_LABEL]: view.name }));
    },
  };
}
