/**
 * Instant vectors and label-set signatures, with PromQL's matching rules.
 * A `Labels` object never holds empty values (PromQL treats an empty label as absent).
 */
import { type Labels, onlyLabels, withoutLabels } from '../exposition/labels.js';

export type { Labels };
export { onlyLabels, withoutLabels };

export type VectorSample = { readonly labels: Labels; readonly value: number };
export type InstantVector = readonly VectorSample[];

export const METRIC_NAME_LABEL = '__name__';

/** A stable key for the given labels; `names` selects which labels take part. */
export function signature(labels: Labels, names: readonly string[]): string {
  const sorted = [...names].sort();
  let key = '';
  for (const name of sorted) {
    const value = labels[name];
    if (value !== undefined && value !== '') key += `${name}\u0000${value}\u0001`;
  }
  return key;
}

/** Signature over every label except `excluded` (and always except the metric name). */
export function signatureWithout(labels: Labels, excluded: readonly string[]): string {
  const skip = new Set([...excluded, METRIC_NAME_LABEL]);
  return signature(
    labels,
    Object.keys(labels).filter((name) => !skip.has(name)),
  );
}

export function dropMetricName(labels: Labels): Labels {
  return METRIC_NAME_LABEL in labels ? withoutLabels(labels, [METRIC_NAME_LABEL]) : labels;
}
