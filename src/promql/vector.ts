/**
 * Instant vectors and label-set signatures, with PromQL's matching rules.
 * A `Labels` object never holds empty values (PromQL treats an empty label as absent).
 */
import { compareLabelNames, type Labels, labelValue, onlyLabels, withoutLabels } from '../exposition/labels.js';

export type { Labels };
export { onlyLabels, withoutLabels };

export type VectorSample = { readonly labels: Labels; readonly value: number };
export type InstantVector = readonly VectorSample[];

export const METRIC_NAME_LABEL = '__name__';

/**
 * A stable key for the given labels; `names` selects which labels take part. Names are taken in the store's
 * canonical order (`compareLabelNames`), the same for every key, so equal label sets give equal keys.
 */
export function signature(labels: Labels, names: readonly string[]): string {
  let key = '';
  for (const name of canonicalOrder(names)) {
    const value = labelValue(labels, name);
    if (value !== undefined && value !== '') key += `${name}\u0000${value}\u0001`;
  }
  return key;
}

/**
 * Signature over every label except `excluded` (and always except the metric name). The labels are read in
 * their own order when it is canonical (as the store keeps them), sorted otherwise.
 */
export function signatureWithout(labels: Labels, excluded: readonly string[]): string {
  let key = '';
  let previous: string | undefined;
  for (const name in labels) {
    if (name === METRIC_NAME_LABEL || excluded.includes(name)) continue;
    if (previous !== undefined && compareLabelNames(previous, name) >= 0) {
      return signature(
        labels,
        Object.keys(labels).filter((n) => n !== METRIC_NAME_LABEL && !excluded.includes(n)),
      );
    }
    previous = name;
    const value = labels[name];
    if (value !== undefined && value !== '') key += `${name}\u0000${value}\u0001`;
  }
  return key;
}

/** Sorted copies of the name lists `signature` is given again and again (matchings, aggregations). */
const sortedLists = new WeakMap<readonly string[], readonly string[]>();

function canonicalOrder(names: readonly string[]): readonly string[] {
  let sorted = sortedLists.get(names);
  if (sorted === undefined) {
    sorted = [...names].sort(compareLabelNames);
    sortedLists.set(names, sorted);
  }
  return sorted;
}

/** A key identifying a label set, every label taking part (any insertion order). */
export function groupKey(labels: Labels): string {
  const names = Object.keys(labels).sort();
  let key = '';
  for (const n of names) key += `${n}\u0000${labels[n]}\u0001`;
  return key;
}
