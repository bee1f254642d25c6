/**
 * The configuration file of `generate --config`:
 *
 * ```yaml
 * selector: 'job=~"my-operator.*"'   # label matchers added to every alert, recording rule and dashboard query
 * clusterLabel: cluster              # the target label naming a target's cluster (default: none)
 * namespaceLabel: namespace          # the target label naming a target's namespace (default: none)
 * dashboardsReadRecordings: true     # dashboards read the series the rules file records (default); false:
 *                                    # they compute every signal, for a Prometheus without the rules
 * rules:                             # threshold overrides, as in the service's configuration
 *   WorkqueueBacklog:
 *     thresholds: { minDepth: 50 }
 * ```
 *
 * Validated here, at the edge: every error names the file and the key.
 */
import { ConfigError, describeValue } from '../config/config-error.js';
import { parseConfigSections, parseRuleOverrides } from '../config/rule-overrides.js';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import { identityLabels } from '../diagnosis/identity.js';
import type { QueryScope } from './query-scope.js';
import { parseSelector, SelectorError } from './selector.js';

export type GenerateConfig = {
  readonly overrides: RuleOverrides;
  readonly scope: QueryScope;
  /** Set when the file sets it; `generateArtifacts` reads recordings by default. */
  readonly dashboardsReadRecordings?: boolean;
};

const KEYS = ['selector', 'clusterLabel', 'namespaceLabel', 'dashboardsReadRecordings', 'rules'] as const;
const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseGenerateConfig(text: string, source: string): GenerateConfig {
  const top = parseConfigSections(text, source, KEYS);
  const overrides = parseRuleOverrides(top.rules, `${source}: rules`);
  let scope: QueryScope = {};
  if (top.selector !== undefined && top.selector !== null) {
    if (typeof top.selector !== 'string') {
      throw new ConfigError(
        `${source}: selector: expected label matchers as a string such as 'job=~"my-operator.*"', got ${describeValue(top.selector)}`,
      );
    }
    try {
      const matchers = parseSelector(top.selector);
      if (matchers.length > 0) scope = { ...scope, selector: matchers };
    } catch (error) {
      if (error instanceof SelectorError) throw new ConfigError(`${source}: selector: ${error.message}`);
      throw error;
    }
  }
  const reserved = identityLabels('queue');
  for (const key of ['clusterLabel', 'namespaceLabel'] as const) {
    const value = top[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || !LABEL_NAME.test(value)) {
      throw new ConfigError(
        `${source}: ${key}: expected a label name such as ${key === 'clusterLabel' ? 'cluster' : 'namespace'}, got ${describeValue(value)}`,
      );
    }
    if (reserved.includes(value)) {
      throw new ConfigError(`${source}: ${key}: ${value} already identifies a queue (${reserved.join(', ')})`);
    }
    scope = { ...scope, [key]: value };
  }
  if (scope.clusterLabel !== undefined && scope.clusterLabel === scope.namespaceLabel) {
    throw new ConfigError(`${source}: namespaceLabel: the same label as clusterLabel (${scope.clusterLabel})`);
  }
  const readRecordings = top.dashboardsReadRecordings;
  if (readRecordings === undefined || readRecordings === null) return { overrides, scope };
  if (typeof readRecordings !== 'boolean') {
    throw new ConfigError(
      `${source}: dashboardsReadRecordings: expected true or false, got ${describeValue(readRecordings)}`,
    );
  }
  return { overrides, scope, dashboardsReadRecordings: readRecordings };
}
