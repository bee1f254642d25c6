/**
 * What `GET /api/v1/rules` reports: the catalog with the thresholds in force after the configured
 * overrides, each rule's alert expression rendered with those thresholds (the same text the generated alert
 * rules carry for these settings), and the queue-specific overrides with what they change; then, apart
 * from the rules, the observations (never alerted on) with their defaults, condition and meaning. Pure;
 * computed once at start, since the overrides do not change while the service runs.
 */
import {
  type QueueOverride,
  type RuleOverrides,
  type RuleSettings,
  ruleSettings,
  ruleSettingsForQueue,
} from '../diagnosis/catalog.js';
import { type ObservationId, observationSettings } from '../diagnosis/observation.js';
import { OBSERVATIONS } from '../diagnosis/observations/index.js';
import {
  conditionWith,
  type RuleId,
  type RuleScope,
  type Severity,
  type ThresholdSpec,
  type ThresholdValues,
} from '../diagnosis/rule.js';
import { runbookUrl } from '../diagnosis/runbook.js';
import { formatDuration, renderPromQL } from '../promql/render.js';

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
  /** How long a firing finding stays firing after the condition last held (`keep_firing_for`); absent without one. */
  readonly keepFiringFor?: string;
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

/** An observation: reported with the queues, never alerted on; its defaults are in force everywhere. */
export type ObservationView = {
  readonly id: ObservationId;
  readonly title: string;
  readonly for: string;
  readonly thresholds: Readonly<Record<string, ThresholdView>>;
  /** The condition (PromQL) with the thresholds in force, for running by hand; no alert carries it. */
  readonly expr: string;
  /** Rules whose finding on a queue replaces the observation there. */
  readonly supersededBy: readonly RuleId[];
  readonly meaning: string;
};

export type RulesView = {
  readonly rules: readonly RuleView[];
  readonly queueOverrides: readonly QueueOverrideView[];
  readonly observations: readonly ObservationView[];
};

export function rulesView(overrides: RuleOverrides, runbookBaseUrl: string): RulesView {
  const ruleWide = ruleSettings(overrides);
  return {
    rules: ruleWide.map((s) => ruleView(s, runbookBaseUrl)),
    queueOverrides: (overrides.queues ?? []).map((q) => queueOverrideView(q, overrides, ruleWide, runbookBaseUrl)),
    observations: OBSERVATIONS.map(observationSettings).map(({ observation, thresholds, forMs }) => ({
      id: observation.id,
      title: observation.title,
      for: formatDuration(forMs),
      thresholds: thresholdViews(observation.thresholds, thresholds),
      expr: renderPromQL(conditionWith(observation, thresholds)),
      supersededBy: observation.supersededBy ?? [],
      meaning: observation.text.meaning,
    })),
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
  const thresholds = thresholdViews(rule.thresholds, settings.thresholds);
  return {
    id: rule.id,
    title: rule.title,
    severity: rule.severity,
    scope: rule.scope,
    enabled: settings.enabled,
    for: formatDuration(settings.forMs),
    ...(settings.keepFiringForMs > 0 ? { keepFiringFor: formatDuration(settings.keepFiringForMs) } : {}),
    thresholds,
    expr: renderPromQL(conditionWith(rule, settings.thresholds)),
    meaning: rule.text.meaning,
    runbook: runbookUrl(runbookBaseUrl, rule.id),
  };
}

function thresholdViews(
  specs: Readonly<Record<string, ThresholdSpec>>,
  values: ThresholdValues,
): Record<string, ThresholdView> {
  const views: Record<string, ThresholdView> = {};
  for (const [name, spec] of Object.entries(specs)) {
    views[name] = {
      value: values[name] ?? spec.default,
      default: spec.default,
      unit: spec.unit,
      description: spec.description,
    };
  }
  return views;
}

function sameSettings(a: RuleSettings, b: RuleSettings | undefined): boolean {
  return (
    b !== undefined &&
    a.enabled === b.enabled &&
    a.forMs === b.forMs &&
    JSON.stringify(a.thresholds) === JSON.stringify(b.thresholds)
  );
}
