/**
 * Label sets derived from label sets (without some names, with only some names, without the metric name) and
 * their signatures, remembered on the label set they come from. A running service evaluates the same expressions
 * over the same series every time, so each derivation is made once per series instead of once per evaluation;
 * derived label sets are remembered objects too, so what is derived from them is remembered in turn.
 *
 * Derived label sets are shared by content (shared-label-sets.ts): the many series of a queue, or the buckets of a
 * histogram, derive one object for their common identity, and what is derived from it is made and held once. A
 * signature is the content key of the derived label set it is the signature of (`signature(labels, names)` is the
 * content key of `labels` with only `names`), so it is held once per distinct derived set, not once per series.
 *
 * Contract: label sets are immutable. For the same label set (object) and names with the same content, the same
 * result (object or string) comes back for as long as the label set lives, equal to what `withoutLabels`,
 * `onlyLabels`, `signature`, `signatureWithout` and `groupKey` compute; label sets with the same content may be
 * given the same object. What is remembered is held in a WeakMap by label set (the label set itself is untouched)
 * and goes with it. Name lists are told apart by content, so a label set holds at most one entry per distinct
 * name list (and kind of derivation) of the expressions evaluated over it.
 */
import { onlyLabels as deriveOnly, withoutLabels as deriveWithout, type Labels } from '../exposition/labels.js';
import { contentKey, SharedLabelSets } from './shared-label-sets.js';
import { groupKey, METRIC_NAME_LABEL, signature } from './vector.js';

/**
 * What one label set has derived, as alternating keys and values: a label set derives a handful of things, and
 * a short array scanned by key identity costs a fraction of a map's memory per label set. Replaced by a longer
 * copy when something is added (an array grown by `push` keeps room for 17 elements).
 */
type Derived = readonly unknown[];

type Table = 'without' | 'only';

/** By label set; an entry goes when its label set does. */
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

/** What `labels` derived under `key`, derived now when not yet. */
function rememberedUnder<T>(labels: Labels, key: string, derive: () => T): T {
  const derived = DERIVED.get(labels);
  if (derived !== undefined)
    for (let i = 0; i < derived.length; i += 2) if (derived[i] === key) return derived[i + 1] as T;
  const value = derive();
  DERIVED.set(labels, derived === undefined ? [key, value] : derived.concat([key, value]));
  return value;
}

/** The shared label set with the content of `derivedSet` (see the module comment). */
function share(derivedSet: Labels): Labels {
  const { labels, key } = SHARED.shared(derivedSet);
  if (labels === derivedSet) rememberedUnder(labels, CONTENT_KEY, () => key);
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
  if (repeatsAName(names)) return signature(labels, names);
  return contentKeyOf(labelsOnly(labels, names));
}

/** The name lists `signatureWithout` leaves out: the given names and the metric name. */
const withMetricName = new WeakMap<readonly string[], readonly string[]>();

/** `signatureWithout(labels, names)`: the content key of `labels` without `names` and the metric name. */
export function signatureWithoutOf(labels: Labels, names: readonly string[]): string {
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
