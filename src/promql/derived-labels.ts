/**
 * Label sets derived from label sets (without some names, with only some names, without the metric name) and
 * their signatures, remembered on the label set they come from. A running service evaluates the same expressions
 * over the same series every time, so each derivation is made once per series instead of once per evaluation;
 * derived label sets are remembered objects too, so what is derived from them is remembered in turn.
 *
 * Contract: label sets are immutable. For the same label set (object) and names with the same content, the same
 * result (object or string) comes back for as long as the label set lives, equal to what `withoutLabels`,
 * `onlyLabels`, `signature`, `signatureWithout` and `groupKey` compute. What is remembered is held by the label
 * set itself (a non-enumerable symbol property: invisible to iteration, spreading, JSON and deep equality) and
 * goes with it. Name lists are told apart by content, so a label set holds at most one entry per distinct name
 * list of the expressions evaluated over it. A label set that cannot be extended (frozen) is derived anew each time.
 */
import { onlyLabels as deriveOnly, withoutLabels as deriveWithout, type Labels } from '../exposition/labels.js';
import { groupKey, METRIC_NAME_LABEL, signature, signatureWithout } from './vector.js';

interface Derived {
  without?: Map<string, Labels>;
  only?: Map<string, Labels>;
  signature?: Map<string, string>;
  signatureWithout?: Map<string, string>;
  groupKey?: string;
}

const DERIVED = Symbol('derived labels');
const METRIC_NAME_ONLY: readonly string[] = [METRIC_NAME_LABEL];

/** The content key of each name list seen (lists from expressions live as long as the expressions). */
const listKeys = new WeakMap<readonly string[], string>();

function listKey(names: readonly string[]): string {
  let key = listKeys.get(names);
  if (key === undefined) {
    key = names.join('\u0000');
    listKeys.set(names, key);
  }
  return key;
}

function derivedOf(labels: Labels): Derived | undefined {
  const held = (labels as { [DERIVED]?: Derived })[DERIVED];
  if (held !== undefined) return held;
  if (!Object.isExtensible(labels)) return undefined;
  const derived: Derived = {};
  Object.defineProperty(labels, DERIVED, { value: derived });
  return derived;
}

function remembered<T>(
  labels: Labels,
  table: 'without' | 'only' | 'signature' | 'signatureWithout',
  names: readonly string[],
  derive: () => T,
): T {
  const derived = derivedOf(labels);
  if (derived === undefined) return derive();
  let map = derived[table] as Map<string, T> | undefined;
  if (map === undefined) {
    map = new Map();
    (derived as Record<typeof table, Map<string, T>>)[table] = map;
  }
  const key = listKey(names);
  let value = map.get(key);
  if (value === undefined) {
    value = derive();
    map.set(key, value);
  }
  return value;
}

/** `labels` without `names`. */
export function labelsWithout(labels: Labels, names: readonly string[]): Labels {
  return remembered(labels, 'without', names, () => deriveWithout(labels, names));
}

/** `labels` with only `names` (those present). */
export function labelsOnly(labels: Labels, names: readonly string[]): Labels {
  return remembered(labels, 'only', names, () => deriveOnly(labels, names));
}

/** `labels` without the metric name (the same object when it has none). */
export function withoutMetricName(labels: Labels): Labels {
  return METRIC_NAME_LABEL in labels ? labelsWithout(labels, METRIC_NAME_ONLY) : labels;
}

/** `signature(labels, names)`. */
export function signatureOf(labels: Labels, names: readonly string[]): string {
  return remembered(labels, 'signature', names, () => signature(labels, names));
}

/** `signatureWithout(labels, names)`. */
export function signatureWithoutOf(labels: Labels, names: readonly string[]): string {
  return remembered(labels, 'signatureWithout', names, () => signatureWithout(labels, names));
}

/** `groupKey(labels)`. */
export function groupKeyOf(labels: Labels): string {
  const derived = derivedOf(labels);
  if (derived === undefined) return groupKey(labels);
  derived.groupKey ??= groupKey(labels);
  return derived.groupKey;
}
