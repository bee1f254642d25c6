/**
 * What `generate` reads of the configuration file every command reads (config/service-config.ts; documented
 * in `deploy/config-example.yaml`):
 *
 * ```yaml
 * selector: 'job=~"my-operator.*"'   # label matchers added to every alert, recording rule and dashboard query
 * clusterLabel: cluster              # the target label naming a target's cluster (default: none)
 * namespaceLabel: namespace          # the target label naming a target's namespace (default: none)
 * dashboardsReadRecordings: true     # dashboards read the series the rules file records (default); false:
 *                                    # they compute every signal, for a Prometheus without the rules
 * runbookBaseUrl: https://...        # where the alerts' and dashboards' runbook links point
 * rules:                             # threshold overrides, as the service reads them
 *   WorkqueueBacklog:
 *     thresholds: { minDepth: 50 }
 * queues:                            # per-queue thresholds and silences: their own alert expressions
 *   - name: pod
 *     rules: { WorkqueueBacklog: { thresholds: { minDepth: 200 } } }
 * ```
 *
 * The other sections (the server, the sources, scraping) are accepted and left aside. Validated by the one
 * loader: every error names the file and the key.
 */
import { resolveServiceConfig, type ServiceConfig } from '../config/service-config.js';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import type { QueryScope } from './query-scope.js';

export type GenerateConfig = {
  readonly overrides: RuleOverrides;
  readonly scope: QueryScope;
  /** Set when the file sets it; `generateArtifacts` reads recordings by default. */
  readonly dashboardsReadRecordings?: boolean;
  /** Set when the file or the flag sets it; `generateArtifacts` has its default. */
  readonly runbookBaseUrl?: string;
};

/** The parts of a resolved configuration `generate` uses. */
export function generateConfigOf(config: ServiceConfig): GenerateConfig {
  return {
    overrides: config.overrides,
    scope: config.scope,
    ...(config.dashboardsReadRecordings !== undefined
      ? { dashboardsReadRecordings: config.dashboardsReadRecordings }
      : {}),
    ...(config.origins.runbookBaseUrl !== undefined ? { runbookBaseUrl: config.runbookBaseUrl } : {}),
  };
}

/** The text of a configuration file, as `generate --config` reads it; `source` names it in errors. */
export function parseGenerateConfig(text: string, source: string): GenerateConfig {
  return generateConfigOf(resolveServiceConfig({ flags: {}, env: {}, file: { path: source, text } }));
}
