/**
 * The Prometheus rules: one group, the recording rules (`recording-rules.ts`) first, then one alert per
 * enabled diagnosis. The expression is the rule's condition with the thresholds in force, over the recorded
 * series; `for` is the rule's duration, and the annotations are built from the rule's text with the alert's
 * measured values filled in by Prometheus at evaluation time.
 */

import type { RuleOverrides } from '../diagnosis/catalog.js';
import { ruleIdentityScope } from '../diagnosis/rule.js';
import { runbookUrl } from '../diagnosis/runbook.js';
import { signal } from '../diagnosis/signals.js';
import { LABEL } from '../metrics/names.js';
import { selector as selectorExpr } from '../promql/expr.js';
import { formatDuration } from '../promql/render.js';
import type { RuleAnalysis } from './condition-analysis.js';
import { formatTemplateValue, labelRef, measuredValue, templateText } from './go-template.js';
import { type QueryScope, scopedIdentityLabels } from './query-scope.js';
import { type RecordingPlan, type RecordingRule, recordingPlan } from './recording-rules.js';

export type AlertingRule = {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: { readonly summary: string; readonly description: string; readonly runbook_url: string };
};

export type RuleGroup = {
  readonly name: string;
  readonly interval: string;
  readonly rules: ReadonlyArray<RecordingRule | AlertingRule>;
};
export type RuleFile = { readonly groups: readonly RuleGroup[] };

export type AlertRuleOptions = {
  readonly groupName: string;
  readonly evaluationIntervalMs: number;
  readonly runbookBaseUrl: string;
  /** The fleet selector and placement labels; none by default. */
  readonly scope?: QueryScope;
  /** The configuration's overrides: its `queues:` give queues their own alerts (recording-rules.ts). */
  readonly overrides?: RuleOverrides;
};

export function alertRuleFile(analyses: readonly RuleAnalysis[], options: AlertRuleOptions): RuleFile {
  const scope = options.scope ?? {};
  const plan = recordingPlan(analyses, scope, options.overrides);
  return {
    groups: [
      {
        name: options.groupName,
        interval: formatDuration(options.evaluationIntervalMs),
        rules: [
          ...plan.rules,
          ...plan.alerts.map((alert) => alertingRule(alert.analysis, alert.expr, plan, scope, options.runbookBaseUrl)),
        ],
      },
    ],
  };
}

function alertingRule(
  analysis: RuleAnalysis,
  expr: string,
  plan: RecordingPlan,
  scope: QueryScope,
  runbookBaseUrl: string,
): AlertingRule {
  const { rule, forMs } = analysis.settings;
  return {
    alert: rule.id,
    expr,
    for: formatDuration(forMs),
    labels: { [LABEL.severity]: rule.severity },
    annotations: {
      summary: summary(analysis, scope),
      description: description(analysis, plan, scope),
      runbook_url: runbookUrl(runbookBaseUrl, rule.id),
    },
  };
}

/** Which queue (or target), and the value the condition's output carries when it is one signal. */
function summary(analysis: RuleAnalysis, scope: QueryScope): string {
  const { rule } = analysis.settings;
  // Placement labels a series may lack are printed only when present.
  const placement = [scope.clusterLabel, scope.namespaceLabel]
    .filter((label) => label !== undefined)
    .map((label) => `{{ with $labels.${label} }}{{ . }}/{{ end }}`)
    .join('');
  const target = `${placement}${labelRef(LABEL.job)}/${labelRef(LABEL.instance)}`;
  const where =
    rule.scope === 'queue'
      ? `queue ${labelRef(LABEL.name)}{{ with $labels.${LABEL.controller} }} (controller {{ . }}){{ end }} on ${target}`
      : target;
  const value =
    analysis.valueSignal === undefined
      ? ''
      : `: ${templateText(analysis.valueSignal.title.toLowerCase())} ${formatTemplateValue('$value', analysis.valueSignal.unit)}`;
  return `${templateText(rule.title)} for ${where}${value}.`;
}

/** What it means, the condition that held, and the evidence measured for this alert's series. */
function description(analysis: RuleAnalysis, plan: RecordingPlan, scope: QueryScope): string {
  const { rule, forMs } = analysis.settings;
  const alertLabels = scopedIdentityLabels(ruleIdentityScope(rule.scope), scope);
  const evidence = rule.evidence.map((id) => {
    const s = signal(id);
    const labels = scopedIdentityLabels(s.scope, scope).filter((l) => alertLabels.includes(l));
    const series = plan.seriesOf(id);
    // The recorded series when there is one; the signal's own PromQL, on the selected targets, otherwise.
    const query =
      series === undefined ? { expr: s.expr, matchers: scope.selector ?? [] } : { expr: selectorExpr(series) };
    return `- ${templateText(s.title)}: ${measuredValue(s, labels, query)}`;
  });
  return [
    templateText(rule.text.meaning),
    '',
    `Held for ${formatDuration(forMs)}: ${templateText(analysis.clauses.map((c) => c.text).join('; '))}.`,
    '',
    'Measured now:',
    ...evidence,
  ].join('\n');
}
