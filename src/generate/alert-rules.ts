/**
 * The Prometheus alert rules: one group, one alert per enabled diagnosis. The expression is the rule's
 * condition with the thresholds in force, `for` is the rule's duration, and the annotations are built from
 * the rule's text with the alert's measured values filled in by Prometheus at evaluation time.
 */

import { identityLabels } from '../diagnosis/identity.js';
import { ruleIdentityScope } from '../diagnosis/rule.js';
import { runbookUrl } from '../diagnosis/runbook.js';
import { signal } from '../diagnosis/signals.js';
import { LABEL } from '../metrics/names.js';
import { formatDuration, renderPromQL } from '../promql/render.js';
import type { RuleAnalysis } from './condition-analysis.js';
import { formatTemplateValue, labelRef, measuredValue, templateText } from './go-template.js';

export type AlertingRule = {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: { readonly summary: string; readonly description: string; readonly runbook_url: string };
};

export type RuleGroup = { readonly name: string; readonly interval: string; readonly rules: readonly AlertingRule[] };
export type RuleFile = { readonly groups: readonly RuleGroup[] };

export type AlertRuleOptions = {
  readonly groupName: string;
  readonly evaluationIntervalMs: number;
  readonly runbookBaseUrl: string;
};

export function alertRuleFile(analyses: readonly RuleAnalysis[], options: AlertRuleOptions): RuleFile {
  return {
    groups: [
      {
        name: options.groupName,
        interval: formatDuration(options.evaluationIntervalMs),
        rules: analyses.map((a) => alertingRule(a, options.runbookBaseUrl)),
      },
    ],
  };
}

function alertingRule(analysis: RuleAnalysis, runbookBaseUrl: string): AlertingRule {
  const { rule, forMs } = analysis.settings;
  return {
    alert: rule.id,
    expr: renderPromQL(analysis.condition),
    for: formatDuration(forMs),
    labels: { [LABEL.severity]: rule.severity },
    annotations: {
      summary: summary(analysis),
      description: description(analysis),
      runbook_url: runbookUrl(runbookBaseUrl, rule.id),
    },
  };
}

/** Which queue (or target), and the value the condition's output carries when it is one signal. */
function summary(analysis: RuleAnalysis): string {
  const { rule } = analysis.settings;
  const target = `${labelRef(LABEL.job)}/${labelRef(LABEL.instance)}`;
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
function description(analysis: RuleAnalysis): string {
  const { rule, forMs } = analysis.settings;
  const alertLabels = identityLabels(ruleIdentityScope(rule.scope));
  const evidence = rule.evidence.map((id) => {
    const s = signal(id);
    const labels = identityLabels(s.scope).filter((l) => alertLabels.includes(l));
    return `- ${templateText(s.title)}: ${measuredValue(s, labels)}`;
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
