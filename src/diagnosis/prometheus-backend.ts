/**
 * Prometheus mode: every expression is rendered as PromQL and evaluated by the server (Prometheus, Thanos,
 * Mimir, Cortex); nothing but label sets and evaluated vectors comes back. This module only translates
 * between the engine's calls and the HTTP API; it holds no PromQL of its own.
 */
import type { PrometheusClient } from '../metrics/prometheus-api.js';
import type { DiagnosisBackend } from './backend.js';
import type { Expr } from './expr.js';
import { renderPromQL } from './promql-render.js';
import type { InstantVector, VectorSample } from './vector.js';

export function createPrometheusBackend(client: PrometheusClient): DiagnosisBackend {
  return {
    async evaluate(expr: Expr, timesMs: readonly number[]): Promise<InstantVector[]> {
      const query = renderPromQL(expr);
      const first = timesMs[0];
      const last = timesMs[timesMs.length - 1];
      if (first === undefined || last === undefined) return [];
      if (timesMs.length === 1) {
        const result = await client.query(query, first / 1000);
        if (result.resultType === 'vector') return [result.result.map((s) => ({ labels: s.metric, value: s.value }))];
        if (result.resultType === 'scalar') return [[{ labels: {}, value: result.result.value }]];
        throw new TypeError(`expected a vector from ${query}, got a ${result.resultType}`);
      }
      const stepMs = (timesMs[1] ?? first) - first;
      const matrix = await client.queryRange(query, first / 1000, last / 1000, stepMs / 1000);
      const vectors: VectorSample[][] = timesMs.map(() => []);
      for (const series of matrix.result) {
        for (const point of series.samples) {
          const index = Math.round((point.timeSec * 1000 - first) / stepMs);
          vectors[index]?.push({ labels: series.metric, value: point.value });
        }
      }
      return vectors;
    },
    async seriesLabels(metric, fromMs, toMs) {
      return client.series([metric], fromMs / 1000, toMs / 1000);
    },
  };
}
