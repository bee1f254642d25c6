/**
 * What the page knows of a queue beyond the report: the rule settings in force for it (the configuration's
 * overrides, as the diagnoses applied them), the identity labels of its series, where it runs (cluster and
 * namespace, from those labels), and the link to its detail dashboard in Grafana.
 *
 * Contract:
 * - A queue's labels are those of its series (`ChartData`), else its target's as the scrape targets list them,
 *   else none: its cluster and namespace are then unknown and it has no dashboard link.
 * - The cluster and namespace are the values of the configuration's `clusterLabel` and `namespaceLabel`, or of
 *   `cluster` and `namespace` when it names none (`namespace` is what Kubernetes discovery sets).
 * - The dashboard link opens the generated detail dashboard (`DASHBOARD_UID.detail`) with each of its queue
 *   variables (the labels of `scopedIdentityLabels`, as the dashboards name their variables) set to the queue's
 *   value, empty where the queue lacks the label (the dashboards match an absent label that way), over the
 *   charts' window up to now.
 */
import { type RuleOverrides, type RuleSettings, ruleSettingsForQueue } from '../../diagnosis/catalog.js';
import type { QueueReport } from '../../diagnosis/report.js';
import type { RuleId } from '../../diagnosis/rule.js';
import { DASHBOARD_UID } from '../../generate/defaults.js';
import { scopedIdentityLabels } from '../../generate/query-scope.js';
import { LABEL } from '../../metrics/names.js';
import type { QueryScope } from '../../promql/query-scope.js';
import type { Labels } from '../../promql/vector.js';
import type { TargetsView } from '../../service/target-status.js';
import { formatDuration } from '../../util/duration.js';
import type { ChartData } from './chart-data.js';

/** What the page reads of the configuration. */
export type PageSettings = {
  /** The rule overrides in force (thresholds, `for`, per queue). Default none. */
  readonly overrides?: RuleOverrides;
  /** The fleet: the labels naming a queue's cluster and namespace, and so the dashboards' variables. */
  readonly scope?: QueryScope;
  /** Base URL of the Grafana that holds the generated dashboards; unset: no dashboard links. */
  readonly grafanaUrl?: string;
};

/** The label names used when the configuration names none (see the module contract). */
const DEFAULT_CLUSTER_LABEL = 'cluster';

export type QueueContext = {
  readonly queue: QueueReport;
  /** The identity labels of the queue's series; empty when unknown. */
  readonly labels: Labels;
  readonly cluster: string | undefined;
  readonly namespace: string | undefined;
  /** The Grafana detail dashboard of the queue, when a Grafana is configured and the labels are known. */
  readonly dashboardUrl: string | undefined;
  /** The settings of `rule` in force for the queue. */
  settings(rule: RuleId): RuleSettings | undefined;
};

export function queueContexts(
  queues: readonly QueueReport[],
  settings: PageSettings,
  targets: TargetsView,
  data: ChartData | undefined,
): QueueContext[] {
  const overrides = settings.overrides ?? {};
  const scope = settings.scope ?? {};
  const clusterLabel = scope.clusterLabel ?? DEFAULT_CLUSTER_LABEL;
  const namespaceLabel = scope.namespaceLabel ?? LABEL.namespace;
  const targetLabels = new Map(targets.mode === 'scrape' ? targets.targets.map((t) => [t.target, t.labels]) : []);
  const windowMs = data === undefined ? undefined : data.stepMs * Math.max(1, data.timesMs.length - 1);
  return queues.map((queue) => {
    const labels: Labels = data?.labels(queue.id) ?? targetLabels.get(queue.queue.target) ?? {};
    let inForce: Map<string, RuleSettings> | undefined;
    return {
      queue,
      labels,
      cluster: labels[clusterLabel],
      namespace: labels[namespaceLabel],
      dashboardUrl:
        settings.grafanaUrl === undefined || Object.keys(labels).length === 0
          ? undefined
          : dashboardUrl(settings.grafanaUrl, labels, scope, windowMs),
      settings(rule) {
        inForce ??= new Map(
          ruleSettingsForQueue(overrides, queue.queue).settings.map((s) => [s.rule.id as string, s] as const),
        );
        return inForce.get(rule);
      },
    };
  });
}

/** The detail dashboard of the queue with `labels` in the Grafana at `base` (see the module contract). */
export function dashboardUrl(base: string, labels: Labels, scope: QueryScope, windowMs: number | undefined): string {
  const params = new URLSearchParams();
  for (const label of scopedIdentityLabels('queue', scope)) params.append(`var-${label}`, labels[label] ?? '');
  params.append('from', windowMs === undefined ? 'now-1h' : `now-${formatDuration(windowMs)}`);
  params.append('to', 'now');
  return `${base.replace(/\/+$/, '')}/d/${DASHBOARD_UID.detail}?${params.toString()}`;
}
