/**
 * Prometheus alert annotations as a list of parts (literal text, an alert label, a signal's value for the
 * alert's series) with two readings of the same list: `goTemplate` writes the Go text/template Prometheus
 * expands, and `annotation-render.ts` computes what that expansion prints, for the generated promtool tests.
 * Only these parts exist, so every template the generator writes is one whose rendering is reproduced.
 *
 * Values are printed for their unit: durations with `humanizeDuration`, ratios with `humanizePercentage`,
 * counts and rates with `readableNumber` (never a milli-prefix: `0.22 items`, `0.82/s`).
 */

import type { SignalDefinition } from '../diagnosis/signals.js';
import type { Unit } from '../diagnosis/units.js';
import type { Expr, LabelMatcher } from '../promql/expr.js';
import { renderPromQL } from '../promql/render.js';
import { readableNumberAction } from './go-format.js';

/**
 * What an annotation queries for a signal: an expression (its own, or its recorded series) and matchers for
 * it. `recordedFrom` is the expression a recorded series is recorded from (the recording rule's), so its
 * value can be computed without the recording.
 */
export type SignalQuery = {
  readonly expr: Expr;
  readonly matchers?: readonly LabelMatcher[];
  readonly recordedFrom?: Expr;
};

/** A signal's value for the alert's series: `query` narrowed by `label="<the alert's value>"` for each of `labels`. */
export type MeasuredPart = {
  readonly kind: 'measured';
  readonly signal: SignalDefinition;
  readonly labels: readonly string[];
  readonly query: SignalQuery;
  /** Printed before the value, when there is one. */
  readonly before: string;
  /** Printed instead of `before` and the value when the query returns nothing. */
  readonly otherwise: string;
};

export type TemplatePart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'label'; readonly label: string }
  /** `before`, the label's value and `after` when the label is set and not empty; nothing otherwise. */
  | { readonly kind: 'labelIfSet'; readonly label: string; readonly before: string; readonly after: string }
  | MeasuredPart;

export function text(value: string): TemplatePart {
  return { kind: 'text', text: value };
}

export function label(name: string): TemplatePart {
  return { kind: 'label', label: name };
}

/** The signal's value for the alert's series after `before`, or `otherwise` ("no data" by default). */
export function measured(
  signal: SignalDefinition,
  labels: readonly string[],
  query: SignalQuery = { expr: signal.expr },
  before = '',
  otherwise = 'no data',
): MeasuredPart {
  return { kind: 'measured', signal, labels, query, before, otherwise };
}

/** The parts as a Go text/template for Prometheus. */
export function goTemplate(parts: readonly TemplatePart[]): string {
  return parts.map(partTemplate).join('');
}

function partTemplate(part: TemplatePart): string {
  switch (part.kind) {
    case 'text':
      return templateText(part.text);
    case 'label':
      return `{{ $labels.${part.label} }}`;
    case 'labelIfSet':
      return `{{ with $labels.${part.label} }}${templateText(part.before)}{{ . }}${templateText(part.after)}{{ end }}`;
    case 'measured': {
      const otherwise = part.otherwise === '' ? '' : `{{ else }}${templateText(part.otherwise)}`;
      const value = `{{ $v := . | first | value }}${unitTemplate('$v', part.signal.unit)}`;
      return `{{ with ${narrowedQueryPipeline(part)} }}${templateText(part.before)}${value}${otherwise}{{ end }}`;
    }
  }
}

/** Literal text inside a template: `{{` would open an action, so it is printed by one. */
function templateText(value: string): string {
  return value.replace(/\{\{/g, '{{ "{{" }}');
}

/** A template variable's value formatted for a unit, as `formatForUnit` prints it. */
function unitTemplate(variable: string, unit: Unit): string {
  switch (unit) {
    case 's':
      return `{{ humanizeDuration ${variable} }}`;
    case 'ratio':
      return `{{ humanizePercentage ${variable} }}`;
    case '1/s':
      return `${readableNumberAction(variable)}/s`;
    case 'items':
      return `${readableNumberAction(variable)} items`;
    case 'workers':
      return `${readableNumberAction(variable)} workers`;
  }
}

const PLACEHOLDER = (name: string) => `@@${name}@@`;
const PLACEHOLDER_PATTERN = /"@@([A-Za-z_][A-Za-z0-9_]*)@@"/g;

/** The matchers narrowing a measured query to the alert's series, with `value(label)` as each label's value. */
export function narrowingMatchers(part: MeasuredPart, value: (label: string) => string): LabelMatcher[] {
  return part.labels.map((name) => ({ label: name, op: '=', value: value(name) }));
}

/**
 * `printf` with the signal's PromQL (or its query), narrowed by `label="<the alert's value>"` for each label:
 * the matcher values are `%q` verbs, filled in from `$labels` in the order they occur. An absent label is the
 * empty string, which PromQL matches as absent, so component-base queues (no `controller`) are narrowed right.
 */
function narrowedQueryPipeline(part: MeasuredPart): string {
  const { query } = part;
  const promql = renderPromQL(query.expr, {
    extraMatchers: [...(query.matchers ?? []), ...narrowingMatchers(part, PLACEHOLDER)],
  });
  if (promql.includes('`')) throw new Error(`signal ${part.signal.id}: PromQL with a backquote cannot be templated`);
  const args: string[] = [];
  const format = promql.replace(/%/g, '%%').replace(PLACEHOLDER_PATTERN, (_match, name: string) => {
    args.push(`$labels.${name}`);
    return '%q';
  });
  return `printf \`${format}\` ${args.join(' ')} | query`;
}
