/**
 * Prometheus mode: signals and conditions are evaluated by a Prometheus-compatible server. Series without
 * `job` and `instance` form one target named after the server's URL, credentials removed
 * (`prometheusTargetName`).
 */

import { createPrometheusClient, type PrometheusClientOptions } from '../prometheus/prometheus-api.js';
import { createPrometheusBackend, prometheusTargetName } from '../prometheus/prometheus-backend.js';
import type { MetricsSource } from './source.js';

export function createPrometheusSource(options: PrometheusClientOptions): MetricsSource {
  const client = createPrometheusClient(options);
  return {
    kind: 'prometheus',
    backend: createPrometheusBackend(client, { targetName: prometheusTargetName(options.url) }),
    targets: () => [],
    dataRange: () => undefined,
    close: async () => {},
  };
}
