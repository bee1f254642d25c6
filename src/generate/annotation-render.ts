/**
 * What Prometheus prints for an annotation template (`go-template.ts` parts) of an alert at one evaluation:
 * the alert's labels filled in, and each measured value queried at the evaluation time with the project's
 * PromQL evaluator and formatted as Prometheus's template functions format it (`go-format.ts`).
 *
 * A recorded series is computed from the expression it is recorded from: Prometheus evaluates a group's
 * recording rules before its alerts at the same time, so the alert's query reads exactly that value (and
 * nothing when the recording rule returned nothing: the series is then marked stale).
 */
import type { Labels } from '../exposition/labels.js';
import { evaluate, type SeriesStore, type SubtreeMemo } from '../promql/evaluate.js';
import { narrowed } from '../promql/narrowed.js';
import type { InstantVector } from '../promql/vector.js';
import { humanizeDuration, humanizePercentage, readableNumber } from './go-format.js';
import { type MeasuredPart, narrowingMatchers, type TemplatePart } from './go-template.js';

export type RenderContext = {
  /** The alert's labels (severity included). */
  readonly labels: Labels;
  readonly store: SeriesStore;
  /** The evaluation time. */
  readonly atMs: number;
  /** Shared by the renderings of one time. */
  readonly memo?: SubtreeMemo;
};

export class AnnotationRenderError extends Error {
  override readonly name = 'AnnotationRenderError';
}

/** The text Prometheus expands the parts to. */
export function renderAnnotation(parts: readonly TemplatePart[], context: RenderContext): string {
  return parts.map((part) => renderPart(part, context)).join('');
}

function renderPart(part: TemplatePart, context: RenderContext): string {
  switch (part.kind) {
    case 'text':
      return part.text;
    case 'label':
      return context.labels[part.label] ?? '';
    case 'labelIfSet': {
      const value = context.labels[part.label] ?? '';
      return value === '' ? '' : `${part.before}${value}${part.after}`;
    }
    case 'measured': {
      const value = measuredValue(part, context);
      return value === undefined ? part.otherwise : `${part.before}${formatForUnit(value, part)}`;
    }
  }
}

/** The first sample's value of the narrowed query, or undefined when it returns nothing. */
function measuredValue(part: MeasuredPart, context: RenderContext): number | undefined {
  const labelValue = (name: string): string => context.labels[name] ?? '';
  const { query } = part;
  let samples: InstantVector;
  if (query.recordedFrom !== undefined) {
    const wanted = narrowingMatchers(part, labelValue);
    samples = evaluate(query.recordedFrom, context.store, context.atMs, context.memo).filter((s) =>
      wanted.every((m) => (s.labels[m.label] ?? '') === m.value),
    );
  } else {
    const matchers = [...(query.matchers ?? []), ...narrowingMatchers(part, labelValue)];
    samples = evaluate(narrowed(query.expr, matchers), context.store, context.atMs);
  }
  // Prometheus takes the first sample in an order this does not reproduce: more than one is not rendered.
  if (samples.length > 1) {
    throw new AnnotationRenderError(`${part.signal.id}: the narrowed query returns ${samples.length} series, not one`);
  }
  return samples[0]?.value;
}

/** A value as the template for its unit prints it. */
function formatForUnit(value: number, part: MeasuredPart): string {
  switch (part.signal.unit) {
    case 's':
      return humanizeDuration(value);
    case 'ratio':
      return humanizePercentage(value);
    case '1/s':
      return `${readableNumber(value)}/s`;
    case 'items':
      return `${readableNumber(value)} items`;
    case 'workers':
      return `${readableNumber(value)} workers`;
  }
}
