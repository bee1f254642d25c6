/**
 * One label set object per content: label sets derived from many series (a queue's identity, a histogram
 * without `le`, a group of an aggregation) come out equal for every series they are derived from, and are then
 * held once, with what is derived from them in turn (derived-labels.ts).
 *
 * Contract:
 * - `shared(labels)` returns the table's label set with the same content as `labels` (the same names with the
 *   same values, in any order; a `Labels` never holds an empty value), registering `labels` itself when the table
 *   holds none. The same object comes back for equal contents for
 *   as long as it lives. Label sets are immutable, so any holder of an equal one may hold the shared one.
 * - `contentKey(labels)` is `name\u0000value\u0001` for every label with a value, in canonical order
 *   (`compareLabelNames`), the metric name included: what `signature(labels, <every name>)` gives (vector.ts).
 *   Equal contents give equal keys.
 * - Held weakly: the table keeps a label set only while something else does. Entries whose label set is gone
 *   are swept once the table has grown to twice what the last sweep left (amortised O(1) per entry).
 */
import { compareLabelNames, type Labels } from '../exposition/labels.js';

/** The first sweep once this many entries are held. */
const FIRST_SWEEP = 4096;

export class SharedLabelSets {
  readonly #byKey = new Map<string, WeakRef<Labels>>();
  #sweepAt = FIRST_SWEEP;

  /** Entries held, collected label sets not yet swept included. */
  get size(): number {
    return this.#byKey.size;
  }

  /** The table's label set with the content of `labels`, and its content key. */
  shared(labels: Labels): { readonly labels: Labels; readonly key: string } {
    const key = contentKey(labels);
    const held = this.#byKey.get(key)?.deref();
    if (held !== undefined) return { labels: held, key };
    if (this.#byKey.size >= this.#sweepAt) this.#sweep();
    this.#byKey.set(key, new WeakRef(labels));
    return { labels, key };
  }

  #sweep(): void {
    for (const [key, ref] of this.#byKey) if (ref.deref() === undefined) this.#byKey.delete(key);
    this.#sweepAt = Math.max(FIRST_SWEEP, 2 * this.#byKey.size);
  }
}

/**
 * See the module contract. The labels are read in their own order when it is canonical (as the store and the
 * derivations keep them), sorted otherwise.
 */
export function contentKey(labels: Labels): string {
  let key = '';
  let previous: string | undefined;
  for (const name in labels) {
    if (previous !== undefined && compareLabelNames(previous, name) >= 0) return sortedContentKey(labels);
    previous = name;
    const value = labels[name];
    if (value !== undefined && value !== '') key += `${name}\u0000${value}\u0001`;
  }
  return key;
}

function sortedContentKey(labels: Labels): string {
  let key = '';
  for (const name of Object.keys(labels).sort(compareLabelNames)) {
    const value = labels[name];
    if (value !== undefined && value !== '') key += `${name}\u0000${value}\u0001`;
  }
  return key;
}
