/**
 * An example Alertmanager configuration for the generated alerts: alerts grouped per queue, routed on
 * `severity` (critical pages, warning opens a ticket), and inhibitions between diagnoses that explain each
 * other on the same queue, so one cause pages once.
 */
import type { RuleId, Severity } from '../diagnosis/rule.js';
import { backlog } from '../diagnosis/rules/backlog.js';
import { saturated } from '../diagnosis/rules/saturated.js';
import { slowWork } from '../diagnosis/rules/slow-work.js';
import { stuckWorker } from '../diagnosis/rules/stuck-worker.js';
import { LABEL, PROMETHEUS_ALERTS } from '../metrics/names.js';
import type { RuleAnalysis } from './condition-analysis.js';
import { type QueryScope, scopedIdentityLabels } from './query-scope.js';

/**
 * Diagnoses that, firing on a queue, make another one on the same queue redundant: a stuck worker is the
 * extreme of slow work, and a backlog is saturation that has already tipped over.
 */
export const INHIBITIONS: ReadonlyArray<{ readonly source: RuleId; readonly target: RuleId; readonly why: string }> = [
  {
    source: stuckWorker.id,
    target: slowWork.id,
    why: 'a sync that never returns is also a slow sync',
  },
  {
    source: backlog.id,
    target: saturated.id,
    why: 'a growing backlog is saturation that has already tipped over',
  },
];

/** Example receivers by severity; the URLs are placeholders to replace. */
const RECEIVER_BY_SEVERITY: Readonly<Record<Severity, { name: string; url: string }>> = {
  critical: { name: 'workqueue-page', url: 'http://alert-receiver.example.invalid/page' },
  warning: { name: 'workqueue-ticket', url: 'http://alert-receiver.example.invalid/ticket' },
};
const SEVERITY_ORDER: readonly Severity[] = ['critical', 'warning'];

export function alertmanagerExample(
  analyses: readonly RuleAnalysis[],
  scope: QueryScope = {},
): Record<string, unknown> {
  const queueLabels = scopedIdentityLabels('queue', scope);
  const present = new Set(analyses.map((a) => a.settings.rule.id));
  const severities = SEVERITY_ORDER.filter((s) => analyses.some((a) => a.settings.rule.severity === s));
  const alertName = PROMETHEUS_ALERTS.alertNameLabel;
  return {
    route: {
      receiver: 'default',
      group_by: [alertName, ...queueLabels],
      group_wait: '30s',
      group_interval: '5m',
      repeat_interval: '4h',
      routes: severities.map((severity) => ({
        matchers: [`${LABEL.severity}="${severity}"`],
        receiver: RECEIVER_BY_SEVERITY[severity].name,
        ...(severity === 'critical' ? { repeat_interval: '1h' } : {}),
      })),
    },
    inhibit_rules: INHIBITIONS.filter((i) => present.has(i.source) && present.has(i.target)).map((i) => ({
      source_matchers: [`${alertName}="${i.source}"`],
      target_matchers: [`${alertName}="${i.target}"`],
      equal: [...queueLabels],
    })),
    receivers: [
      { name: 'default' },
      ...severities.map((severity) => ({
        name: RECEIVER_BY_SEVERITY[severity].name,
        webhook_configs: [{ url: RECEIVER_BY_SEVERITY[severity].url, send_resolved: true }],
      })),
    ],
  };
}
