/**
 * Label sets derived from label sets (without some names, with only some names, without the metric name) and
 * their signatures.
 *
 * Derived label sets are shared by content (shared-label-sets.ts): the many series of a queue, or the buckets of a
 * histogram, derive one object for their common identity. What is derived from a derived label set is remembered
 * on it, so a chain of derivations over few distinct contents is made once. What is derived from any other label
 * set (a series' own, as the store holds it) is computed at each call and not remembered: operators derive from
 * their inputs' series only when they make a plan (input-plans.ts), which then holds what they need, so remembering
 * per series would hold a copy of it for as long as the series lives.
 *
 * Contract: label sets are immutable. The results equal what `withoutLabels`, `onlyLabels`, `signature`,
 * `signatureWithout` and `groupKey` compute. A derived label set is the one object of its content for as long as
 * it lives: the same object comes back for equal results, whatever label set they are derived from. The label set
 * derived from is untouched; what is remembered on a derived set is held in a WeakMap and goes with it. Name lists
 * are told apart by content, so a derived set holds at most one entry per distinct name list (and kind of
 * derivation) of the expressions evaluated over it.
 */
import { onlyLabels as deriveOnly, withoutLabels as deriveWithout, type Labels } from '../exposition/labels.js';
import { contentKey, SharedLabelSets } from './shared-label-sets.js';
import { groupKey, METRIC_NAME_LABEL, signature, signatureWithout } from './vector.js';

/**
 * What one derived label set has derived, as alternating keys and values: a label set derives a handful of
 * things, and a short array scanned by key identity costs a fraction of a map's memory per label set. Replaced by
 * a longer copy when something is added (an array grown by `push` keeps room for 17 elements).
 */
type Derived = readonly unknown[];

type Table = 'without' | 'only';

/** By derived label set (every one has an entry, its content key, from when it is shared); goes with it. */
const DERIVED = new WeakMap<Labels, Derived>();
/** Every derived label set, by content. */
const SHARED = new SharedLabelSets();
const METRIC_NAME_ONLY: readonly string[] = [METRIC_NAME_LABEL];
const GROUP_KEY = 'groupKey';
const CONTENT_KEY = 'contentKey';

/**
 * Each name list's keys, one per table (`<table> <names>`), made once per list object: lists from expressions
 * live as long as the expressions, and equal contents give equal keys.
 */
const listKeys = new WeakMap<readonly string[], Readonly<Record<Table, string>>>();

function keyOf(table: Table, names: readonly string[]): string {
  let keys = listKeys.get(names);
  if (keys === undefined) {
    const list = names.join('\u0000');
    keys = { without: `without ${list}`, only: `only ${list}` };
    listKeys.set(names, keys);
  }
  return keys[table];
}

/** Whether `labels` is a derived (shared) label set, which remembers what is derived from it. */
function isDerived(labels: Labels): boolean {
  return DERIVED.has(labels);
}

/** What `labels` derived under `key`, derived now when not yet; remembered on derived label sets only. */
function rememberedUnder<T>(labels: Labels, key: string, derive: () => T): T {
  const derived = DERIVED.get(labels);
  if (derived === undefined) return derive();
  for (let i = 0; i < derived.length; i += 2) if (derived[i] === key) return derived[i + 1] as T;
  const value = derive();
  DERIVED.set(labels, derived.concat([key, value]));
  return value;
}

/** The shared label set with the content of `derivedSet` (see the module comment). */
function share(derivedSet: Labels): Labels {
  const { labels, key } = SHARED.shared(derivedSet);
  if (labels === derivedSet) DERIVED.set(labels, [CONTENT_KEY, key]);
  return labels;
}

/** `labels` without `names`. */
export function labelsWithout(labels: Labels, names: readonly string[]): Labels {
  return rememberedUnder(labels, keyOf('without', names), () => share(deriveWithout(labels, names)));
}

/** `labels` with only `names` (those present). */
export function labelsOnly(labels: Labels, names: readonly string[]): Labels {
  return rememberedUnder(labels, keyOf('only', names), () => share(deriveOnly(labels, names)));
}

/** `labels` without the metric name (the same object when it has none). */
export function withoutMetricName(labels: Labels): Labels {
  return METRIC_NAME_LABEL in labels ? labelsWithout(labels, METRIC_NAME_ONLY) : labels;
}

/** `contentKey(labels)` (shared-label-sets.ts). */
function contentKeyOf(labels: Labels): string {
  return rememberedUnder(labels, CONTENT_KEY, () => contentKey(labels));
}

/** Name lists with a name more than once (their signature repeats it, the label set with only them cannot). */
const repeating = new WeakMap<readonly string[], boolean>();

function repeatsAName(names: readonly string[]): boolean {
  let repeats = repeating.get(names);
  if (repeats === undefined) {
    repeats = new Set(names).size < names.length;
    repeating.set(names, repeats);
  }
  return repeats;
}

/** `signature(labels, names)`: the content key of `labels` with only `names`. */
export function signatureOf(labels: Labels, names: readonly string[]): string {
  if (repeatsAName(names) || !isDerived(labels)) return signature(labels, names);
  return contentKeyOf(labelsOnly(labels, names));
}

/** The name lists `signatureWithout` leaves out: the given names and the metric name. */
const withMetricName = new WeakMap<readonly string[], readonly string[]>();

/** `signatureWithout(labels, names)`: the content key of `labels` without `names` and the metric name. */
export function signatureWithoutOf(labels: Labels, names: readonly string[]): string {
  if (!isDerived(labels)) return signatureWithout(labels, names);
  let excluded = withMetricName.get(names);
  if (excluded === undefined) {
    excluded = [...names, METRIC_NAME_LABEL];
    withMetricName.set(names, excluded);
  }
  return contentKeyOf(labelsWithout(labels, excluded));
}

/** `groupKey(labels)`. */
export function groupKeyOf(labels: Labels): string {
  return rememberedUnder(labels, GROUP_KEY, () => groupKey(labels));
}
