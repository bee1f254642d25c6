/**
 * Prometheus mode: signals and conditions are evaluated by a Prometheus-compatible server. Series without
 * `job` and `instance` form one target named after the server's URL, credentials removed
 * (`prometheusTargetName`). The fleet selector, when given, restricts every query; the engine (`auto` by default)
 * says whether queries are written in PromQL or MetricsQL (prometheus-backend.ts).
 */

import { createPrometheusClient, type PrometheusClientOptions } from '../prometheus/prometheus-api.js';
import {
  createPrometheusBackend,
  type PrometheusEngine,
  prometheusTargetName,
} from '../prometheus/prometheus-backend.js';
import type { LabelMatcher } from '../promql/expr.js';
import { renderMatchers } from '../promql/render.js';
import type { MetricsSource } from './source.js';

export function createPrometheusSource(
  options: PrometheusClientOptions,
  selector: readonly LabelMatcher[] = [],
  engine: PrometheusEngine = 'auto',
): MetricsSource {
  const client = createPrometheusClient(options);
  return {
    kind: 'prometheus',
    backend: createPrometheusBackend(client, { targetName: prometheusTargetName(options.url), selector, engine }),
    targets: () => [],
    dataRange: () => undefined,
    description: `${prometheusTargetName(options.url)}${selector.length > 0 ? ` with the selector ${renderMatchers(selector)}` : ''}`,
    close: async () => {},
  };
}
