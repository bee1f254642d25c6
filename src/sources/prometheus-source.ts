/**
 * Prometheus mode: signals and conditions are evaluated by a Prometheus-compatible server. Series without
 * `job` and `instance` form one target named after the server's URL, credentials removed
 * (`prometheusTargetName`). The fleet selector, when given, restricts every query (prometheus-backend.ts).
 */

import { createPrometheusClient, type PrometheusClientOptions } from '../prometheus/prometheus-api.js';
import { createPrometheusBackend, prometheusTargetName } from '../prometheus/prometheus-backend.js';
import type { LabelMatcher } from '../promql/expr.js';
import { type QueryDialect, renderMatchers } from '../promql/render.js';
import type { MetricsSource } from './source.js';

export function createPrometheusSource(
  options: PrometheusClientOptions,
  selector: readonly LabelMatcher[] = [],
  dialect: QueryDialect = 'promql',
): MetricsSource {
  const client = createPrometheusClient(options);
  return {
    kind: 'prometheus',
    backend: createPrometheusBackend(client, { targetName: prometheusTargetName(options.url), selector, dialect }),
    targets: () => [],
    dataRange: () => undefined,
    description: `${prometheusTargetName(options.url)}${selector.length > 0 ? ` with the selector ${renderMatchers(selector)}` : ''}`,
    close: async () => {},
  };
}
