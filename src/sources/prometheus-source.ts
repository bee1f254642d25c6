/** Prometheus mode: signals and conditions are evaluated by a Prometheus-compatible server. */
import { createPrometheusBackend } from '../diagnosis/prometheus-backend.js';
import { createPrometheusClient, type PrometheusClientOptions } from '../metrics/prometheus-api.js';
import type { MetricsSource } from './source.js';

export function createPrometheusSource(options: PrometheusClientOptions): MetricsSource {
  const client = createPrometheusClient(options);
  return {
    kind: 'prometheus',
    backend: createPrometheusBackend(client),
    targets: () => [],
    dataRange: () => undefined,
    close: async () => {},
  };
}
