/**
 * The Prometheus rules: one group, the recording rules (`recording-rules.ts`) first, then one alert per
 * enabled diagnosis. The expression is the rule's condition with the thresholds in force, over the recorded
 * series; `for` is the rule's duration (and `keep_firing_for` its keep, where it has one), and the annotations
 * are built from the rule's text with the alert's measured values filled in by Prometheus at evaluation time.
 */

import type { RuleOverrides } from '../diagnosis/catalog.js';
import { ruleIdentityScope } from '../diagnosis/rule.js';
import { runbookUrl } from '../diagnosis/runbook.js';
import { type SignalId, signal } from '../diagnosis/signals.js';
import { LABEL } from '../metrics/names.js';
import { selector as selectorExpr } from '../promql/expr.js';
import { formatDuration } from '../promql/render.js';
import { descriptionSignals, summarySignals } from './alert-evidence.js';
import type { RuleAnalysis } from './condition-analysis.js';
import { goTemplate, label, measured, type SignalQuery, type TemplatePart, text } from './go-template.js';
import { type QueryScope, scopedIdentityLabels } from './query-scope.js';
import { type RecordingPlan, type RecordingRule, recordingPlan } from './recording-rules.js';

export type AlertingRule = {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  /** The rule's `keepFiringForMs`, where it has one (Prometheus 2.42 and later). */
  readonly keep_firing_for?: string;
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
  const { rule, forMs, keepFiringForMs } = analysis.settings;
  return {
    alert: rule.id,
    expr,
    for: formatDuration(forMs),
    ...(keepFiringForMs > 0 ? { keep_firing_for: formatDuration(keepFiringForMs) } : {}),
    labels: { [LABEL.severity]: rule.severity },
    annotations: {
      summary: goTemplate(summary(analysis, plan, scope)),
      description: goTemplate(description(analysis, plan, scope)),
      runbook_url: runbookUrl(runbookBaseUrl, rule.id),
    },
  };
}

/** The summary and description of an alert, as template parts (`go-template.ts`). */
export type AlertAnnotationParts = {
  readonly summary: readonly TemplatePart[];
  readonly description: readonly TemplatePart[];
};

export function alertAnnotationParts(
  analysis: RuleAnalysis,
  plan: RecordingPlan,
  scope: QueryScope,
): AlertAnnotationParts {
  return { summary: summary(analysis, plan, scope), description: description(analysis, plan, scope) };
}

/**
 * Which queue (or target), then the decisive evidence measured for it (`alert-evidence.ts`): the first value
 * always ("no data" when missing), the others only when they have one.
 */
function summary(analysis: RuleAnalysis, plan: RecordingPlan, scope: QueryScope): TemplatePart[] {
  const { rule } = analysis.settings;
  // Placement labels a series may lack are printed only when present.
  const placement = [scope.clusterLabel, scope.namespaceLabel]
    .filter((name) => name !== undefined)
    .map((name): TemplatePart => ({ kind: 'labelIfSet', label: name, before: '', after: '/' }));
  const target = [...placement, label(LABEL.job), text('/'), label(LABEL.instance)];
  const where: TemplatePart[] =
    rule.scope === 'queue'
      ? [
          text('queue '),
          label(LABEL.name),
          { kind: 'labelIfSet', label: LABEL.controller, before: ' (controller ', after: ')' },
          text(' on '),
          ...target,
        ]
      : target;
  const values = summarySignals(analysis).map((id, i) =>
    evidenceValue(id, analysis, plan, scope, `${i === 0 ? ': ' : ', '}${lowerFirst(signal(id).title)} `, i === 0),
  );
  return [text(`${rule.title} for `), ...where, ...values, text('.')];
}

/** What it means, the condition that held, and the evidence measured for this alert's series, decisive first. */
function description(analysis: RuleAnalysis, plan: RecordingPlan, scope: QueryScope): TemplatePart[] {
  const { rule, forMs } = analysis.settings;
  const header = [
    rule.text.meaning,
    '',
    `Held for ${formatDuration(forMs)}: ${analysis.clauses.map((c) => c.text).join('; ')}.`,
    '',
    'Measured now:',
  ].join('\n');
  const evidence = descriptionSignals(analysis).flatMap((id) => [
    text(`\n- ${signal(id).title}: `),
    evidenceValue(id, analysis, plan, scope, '', true),
  ]);
  return [text(header), ...evidence];
}

/**
 * A signal's value for the alert's series, after `before`: from its recorded series when there is one, from
 * its own PromQL on the selected targets otherwise. When `always`, "no data" stands for a missing value;
 * otherwise nothing is printed.
 */
function evidenceValue(
  id: SignalId,
  analysis: RuleAnalysis,
  plan: RecordingPlan,
  scope: QueryScope,
  before: string,
  always: boolean,
): TemplatePart {
  const s = signal(id);
  const alertLabels = scopedIdentityLabels(ruleIdentityScope(analysis.settings.rule.scope), scope);
  const labels = scopedIdentityLabels(s.scope, scope).filter((l) => alertLabels.includes(l));
  const series = plan.seriesOf(id);
  const recordedFrom = plan.recordedFrom(id);
  const query: SignalQuery =
    series === undefined || recordedFrom === undefined
      ? { expr: s.expr, matchers: scope.selector ?? [] }
      : { expr: selectorExpr(series), recordedFrom };
  return always ? measured(s, labels, query, before) : measured(s, labels, query, before, '');
}

/** `Add rate` → `add rate`; an acronym (`API write rate`) stays as it is. */
function lowerFirst(title: string): string {
  return /^[A-Z][A-Z]/.test(title) ? title : title.charAt(0).toLowerCase() + title.slice(1);
}
