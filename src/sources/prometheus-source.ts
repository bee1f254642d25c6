/**
 * Prometheus mode: signals and conditions are evaluated by a Prometheus-compatible server. Series without
 * `job` and `instance` form one target named after the server's URL, credentials removed
 * (`prometheusTargetName`). The fleet selector, when given, restricts every query; the engine (`auto` by default)
 * says whether queries are written in PromQL or MetricsQL, and the recorded signals which signals may be read from
 * the series the shipped recording rules write (prometheus-backend.ts, recorded-series.ts).
 */

import { createPrometheusClient, type PrometheusClientOptions } from '../prometheus/prometheus-api.js';
import {
  createPrometheusBackend,
  type PrometheusBackendOptions,
  prometheusTargetName,
} from '../prometheus/prometheus-backend.js';
import { renderMatchers } from '../promql/render.js';
import type { MetricsSource } from './source.js';

/** What the queries are: the backend's options but the target name, which is the server's. */
export type PrometheusQueryOptions = Omit<PrometheusBackendOptions, 'targetName'>;

export function createPrometheusSource(
  options: PrometheusClientOptions,
  queries: PrometheusQueryOptions = {},
): MetricsSource {
  const client = createPrometheusClient(options);
  const selector = queries.selector ?? [];
  return {
    kind: 'prometheus',
    backend: createPrometheusBackend(client, { ...queries, targetName: prometheusTargetName(options.url) }),
    targets: () => [],
    dataRange: () => undefined,
    description: `${prometheusTargetName(options.url)}${selector.length > 0 ? ` with the selector ${renderMatchers(selector)}` : ''}`,
    close: async () => {},
  };
}
