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
