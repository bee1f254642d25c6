/**
 * Label sets derived from label sets (without some names, with only some names, without the metric name) and
 * their signatures, remembered on the label set they come from. A running service evaluates the same expressions
 * over the same series every time, so each derivation is made once per series instead of once per evaluation;
 * derived label sets are remembered objects too, so what is derived from them is remembered in turn.
 *
 * Contract: label sets are immutable. For the same label set (object) and names with the same content, the same
 * result (object or string) comes back for as long as the label set lives, equal to what `withoutLabels`,
 * `onlyLabels`, `signature`, `signatureWithout` and `groupKey` compute. What is remembered is held in a WeakMap by
 * label set (the label set itself is untouched) and goes with it. Name lists are told apart by content, so a label
 * set holds at most one entry per distinct name list (and kind of derivation) of the expressions evaluated over it.
 */
import { onlyLabels as deriveOnly, withoutLabels as deriveWithout, type Labels } from '../exposition/labels.js';
import { groupKey, METRIC_NAME_LABEL, signature, signatureWithout } from './vector.js';

/**
 * What one label set has derived, as alternating keys and values: a label set derives a handful of things, and
 * a short array scanned by key identity costs a fraction of a map's memory per label set.
 */
type Derived = unknown[];

type Table = 'without' | 'only' | 'signature' | 'signatureWithout';

/** By label set; an entry goes when its label set does. */
const DERIVED = new WeakMap<Labels, Derived>();
const METRIC_NAME_ONLY: readonly string[] = [METRIC_NAME_LABEL];
const GROUP_KEY = 'groupKey';

/**
 * Each name list's keys, one per table (`<table> <names>`), made once per list object: lists from expressions
 * live as long as the expressions, and equal contents give equal keys.
 */
const listKeys = new WeakMap<readonly string[], Readonly<Record<Table, string>>>();

function keyOf(table: Table, names: readonly string[]): string {
  let keys = listKeys.get(names);
  if (keys === undefined) {
    const list = names.join('\u0000');
    keys = {
      without: `without ${list}`,
      only: `only ${list}`,
      signature: `signature ${list}`,
      signatureWithout: `signatureWithout ${list}`,
    };
    listKeys.set(names, keys);
  }
  return keys[table];
}

function derivedOf(labels: Labels): Derived {
  let derived = DERIVED.get(labels);
  if (derived === undefined) {
    derived = [];
    DERIVED.set(labels, derived);
  }
  return derived;
}

/** What `labels` derived under `key`, derived now when not yet. */
function rememberedUnder<T>(labels: Labels, key: string, derive: () => T): T {
  const derived = derivedOf(labels);
  for (let i = 0; i < derived.length; i += 2) if (derived[i] === key) return derived[i + 1] as T;
  const value = derive();
  derived.push(key, value);
  return value;
}

function remembered<T>(labels: Labels, table: Table, names: readonly string[], derive: () => T): T {
  return rememberedUnder(labels, keyOf(table, names), derive);
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
  return rememberedUnder(labels, GROUP_KEY, () => groupKey(labels));
}
