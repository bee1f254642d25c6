/**
 * Go text/template pieces for Prometheus alert annotations: literal text made safe, an alert label, a
 * value formatted for its unit, and a signal's PromQL narrowed to the alert's series and run with `query`.
 */

import type { SignalDefinition } from '../diagnosis/signals.js';
import type { Unit } from '../diagnosis/units.js';
import type { Expr, LabelMatcher } from '../promql/expr.js';
import { renderPromQL } from '../promql/render.js';

/** Literal text inside a template: `{{` would open an action, so it is printed by one. */
export function templateText(text: string): string {
  return text.replace(/\{\{/g, '{{ "{{" }}');
}

/** `{{ $labels.<label> }}`. */
export function labelRef(label: string): string {
  return `{{ $labels.${label} }}`;
}

/** A pipeline's value formatted for a unit, as Prometheus' template functions print it. */
export function formatTemplateValue(pipeline: string, unit: Unit): string {
  switch (unit) {
    case 's':
      return `{{ ${pipeline} | humanizeDuration }}`;
    case 'ratio':
      return `{{ ${pipeline} | humanizePercentage }}`;
    case '1/s':
      return `{{ ${pipeline} | humanize }}/s`;
    case 'items':
      return `{{ ${pipeline} | humanize }} items`;
    case 'workers':
      return `{{ ${pipeline} | humanize }} workers`;
  }
}

const PLACEHOLDER = (label: string) => `@@${label}@@`;
const PLACEHOLDER_PATTERN = /"@@([A-Za-z_][A-Za-z0-9_]*)@@"/g;

/** What an annotation queries for a signal: an expression (its own, or its recorded series) and matchers for it. */
export type SignalQuery = { readonly expr: Expr; readonly matchers?: readonly LabelMatcher[] };

/**
 * `printf` with the signal's PromQL (or `query`), narrowed by `label="<the alert's value>"` for each label:
 * the matcher values are `%q` verbs, filled in from `$labels` in the order they occur. An absent label is the
 * empty string, which PromQL matches as absent, so component-base queues (no `controller`) are narrowed right.
 */
export function narrowedQueryPipeline(
  signal: SignalDefinition,
  labels: readonly string[],
  query: SignalQuery = { expr: signal.expr },
): string {
  const matchers: LabelMatcher[] = labels.map((label) => ({ label, op: '=', value: PLACEHOLDER(label) }));
  const promql = renderPromQL(query.expr, { extraMatchers: [...(query.matchers ?? []), ...matchers] });
  if (promql.includes('`')) throw new Error(`signal ${signal.id}: PromQL with a backquote cannot be templated`);
  const args: string[] = [];
  const format = promql.replace(/%/g, '%%').replace(PLACEHOLDER_PATTERN, (_match, label: string) => {
    args.push(`$labels.${label}`);
    return '%q';
  });
  return `printf \`${format}\` ${args.join(' ')} | query`;
}

/** The signal's current value for the alert's series, formatted for its unit, or "no data". */
export function measuredValue(signal: SignalDefinition, labels: readonly string[], query?: SignalQuery): string {
  return `{{ with ${narrowedQueryPipeline(signal, labels, query)} }}${formatTemplateValue('. | first | value', signal.unit)}{{ else }}no data{{ end }}`;
}
