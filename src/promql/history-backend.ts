/**
 * The in-process history as a `DiagnosisBackend`: every expression evaluated over the scraped or replayed
 * history by the PromQL evaluator. A batch is evaluated one time after another, each time's signals computed
 * once for every expression that reads them; the history's change watermarks tell callers what still holds.
 *
 * The evaluation shares the event loop: between two expressions it yields once a slice (`sliceMs`) is used up,
 * so a server on the same loop stays responsive while many queues are evaluated, and it stops at the next
 * expression once the call's signal is aborted. What is kept across a yield is computed vectors only (the
 * per-time memo), never samples read out of the history: a selection is read one series at a time.
 *
 * Subqueries' inner vectors are kept across times and calls (`StepVectors`): each new time computes only the steps
 * its windows add. What the history's change watermark says was written at or before a step time is computed
 * again, and steps older than every window a batch reads are forgotten.
 */

import type { ChangeReader } from '../store/change-watermarks.js';
import type { History } from '../store/history.js';
import { EventLoopSlicer } from '../util/event-loop-slicer.js';
import type { DiagnosisBackend } from './backend.js';
import { evaluate, type SeriesStore, StepVectors, type SubtreeMemo } from './evaluate.js';
import { type Expr, longestRangeOf } from './expr.js';
import type { InstantVector, Labels } from './vector.js';

/** A store that can also list series, as the in-process history does. */
export interface ListableSeriesStore extends SeriesStore {
  seriesLabels(metric: string, fromMs: number, toMs: number): Labels[];
  changes?(): ChangeReader;
}

export interface StoreBackendOptions {
  /** Longest run of evaluation between two yields to the event loop; default `DEFAULT_SLICE_MS`. */
  readonly sliceMs?: number;
}

/** The longest range of each expression a batch evaluates, computed once per expression (the same objects every time). */
const LONGEST_RANGE = new WeakMap<Expr, number>();

function longestRangeOfAll(exprs: readonly Expr[]): number {
  let longest = 0;
  for (const expr of exprs) {
    let rangeMs = LONGEST_RANGE.get(expr);
    if (rangeMs === undefined) {
      rangeMs = longestRangeOf(expr);
      LONGEST_RANGE.set(expr, rangeMs);
    }
    longest = Math.max(longest, rangeMs);
  }
  return longest;
}

export function createStoreBackend(store: ListableSeriesStore, options: StoreBackendOptions = {}): DiagnosisBackend {
  const steps = new StepVectors();
  const written = store.changes?.();
  const evaluateBatch = async (
    exprs: readonly Expr[],
    timesMs: readonly number[],
    signal?: AbortSignal,
  ): Promise<InstantVector[][]> => {
    const slicer = new EventLoopSlicer({ ...options, signal });
    const out = exprs.map(() => new Array<InstantVector>(timesMs.length));
    for (const [timeIndex, t] of timesMs.entries()) {
      // Read before each time: samples a scrape wrote while the previous one yielded are seen by this one.
      if (written !== undefined) steps.forgetFrom(written.takeEarliest());
      if (timeIndex === 0) steps.forgetBefore(t - longestRangeOfAll(exprs));
      const memo: SubtreeMemo = new Map();
      for (const [exprIndex, expr] of exprs.entries()) {
        await slicer.pause();
        (out[exprIndex] as InstantVector[])[timeIndex] = evaluate(expr, store, t, memo, steps);
      }
    }
    return out;
  };
  const changes = store.changes?.bind(store);
  return {
    async evaluate(expr, timesMs, signal) {
      return (await evaluateBatch([expr], timesMs, signal))[0] ?? [];
    },
    evaluateBatch,
    async seriesLabels(metric, fromMs, toMs, signal) {
      signal?.throwIfAborted();
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
    select: (metric, matchers, startMs, endMs) => history.selectWindows({ metric, matchers }, startMs, endMs),
    seriesLabels: (metric, fromMs, toMs) => history.seriesLabels(metric, fromMs, toMs),
  };
}
