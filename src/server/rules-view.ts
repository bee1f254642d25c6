/**
 * What `GET /api/v1/rules` reports: the catalog with the thresholds in force after the configured
 * overrides, each rule's alert expression rendered with those thresholds (the same text the generated alert
 * rules carry for these settings), and the queue-specific overrides with what they change. Pure; computed
 * once at start, since the overrides do not change while the service runs.
 */
import {
  type QueueOverride,
  type RuleOverrides,
  type RuleSettings,
  ruleSettings,
  ruleSettingsForQueue,
} from '../diagnosis/catalog.js';
import { runbookUrl } from '../diagnosis/engine.js';
import { formatDuration, renderPromQL } from '../diagnosis/promql-render.js';
import type { RuleId, RuleScope, Severity, ThresholdSpec } from '../diagnosis/rule.js';

export type ThresholdView = {
  readonly value: number;
  readonly default: number;
  readonly unit: ThresholdSpec['unit'];
  readonly description: string;
};

export type RuleView = {
  readonly id: RuleId;
  readonly title: string;
  readonly severity: Severity;
  readonly scope: RuleScope;
  readonly enabled: boolean;
  /** How long the condition must hold, as a Prometheus duration. */
  readonly for: string;
  readonly thresholds: Readonly<Record<string, ThresholdView>>;
  /** The alert expression (PromQL) with the thresholds in force. */
  readonly expr: string;
  readonly meaning: string;
  readonly runbook: string;
};

export type QueueOverrideView = {
  readonly match: { readonly name: string | null; readonly controller: string | null };
  readonly silenced: boolean;
  /** The rules whose settings differ for the matched queues, with the settings in force for them. */
  readonly rules: readonly RuleView[];
};

export type RulesView = {
  readonly rules: readonly RuleView[];
  readonly queueOverrides: readonly QueueOverrideView[];
};

export function rulesView(overrides: RuleOverrides, runbookBaseUrl: string): RulesView {
  const ruleWide = ruleSettings(overrides);
  return {
    rules: ruleWide.map((s) => ruleView(s, runbookBaseUrl)),
    queueOverrides: (overrides.queues ?? []).map((q) => queueOverrideView(q, overrides, ruleWide, runbookBaseUrl)),
  };
}

function queueOverrideView(
  entry: QueueOverride,
  overrides: RuleOverrides,
  ruleWide: readonly RuleSettings[],
  runbookBaseUrl: string,
): QueueOverrideView {
  const match = { name: entry.name ?? null, controller: entry.controller ?? null };
  // A queue with exactly this name and controller: every entry that matches it applies, in order.
  const { settings } = ruleSettingsForQueue(overrides, match);
  const changed = settings.filter((s, i) => !sameSettings(s, ruleWide[i]));
  return { match, silenced: entry.silenced === true, rules: changed.map((s) => ruleView(s, runbookBaseUrl)) };
}

function ruleView(settings: RuleSettings, runbookBaseUrl: string): RuleView {
  const { rule } = settings;
  const thresholds: Record<string, ThresholdView> = {};
  for (const [name, spec] of Object.entries(rule.thresholds as Record<string, ThresholdSpec>)) {
    thresholds[name] = {
      value: settings.thresholds[name] ?? spec.default,
      default: spec.default,
      unit: spec.unit,
      description: spec.description,
    };
  }
  return {
    id: rule.id,
    title: rule.title,
    severity: rule.severity,
    scope: rule.scope,
    enabled: settings.enabled,
    for: formatDuration(settings.forMs),
    thresholds,
    expr: renderPromQL(rule.condition(settings.thresholds)),
    meaning: rule.text.meaning,
    runbook: runbookUrl(runbookBaseUrl, rule.id),
  };
}

function sameSettings(a: RuleSettings, b: RuleSettings | undefined): boolean {
  return (
    b !== undefined &&
    a.enabled === b.enabled &&
    a.forMs === b.forMs &&
    JSON.stringify(a.thresholds) === JSON.stringify(b.thresholds)
  );
}
