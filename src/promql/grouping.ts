/**
 * A vector's samples put into groups by a key of their labels, as aggregations and `histogram_quantile` group
 * them: groups numbered in order of first appearance, each with the label set of its first sample's group.
 * A grouping depends on label sets only, so an operator remembers it for inputs with the same ones (input-plans.ts)
 * and reduces each evaluation's values by it.
 */
import type { Labels } from './vector.js';

/** Sample `i` is in group `groupOf[i]` (-1: in none, left out), whose label set is `labels[groupOf[i]]`. */
export type Grouping = { readonly groupOf: Int32Array; readonly labels: readonly Labels[] };

/** Numbers groups by key in order of first appearance, for a `Grouping` being built. */
export class GroupNumbering {
  readonly #byKey = new Map<string, number>();
  readonly labels: Labels[] = [];

  /** The number of the group with `key`, `undefined` when there is none yet. */
  numberOf(key: string): number | undefined {
    return this.#byKey.get(key);
  }

  /** Opens the group `key` (not open yet) with the label set `labels`; returns its number. */
  open(key: string, labels: Labels): number {
    const number = this.labels.length;
    this.#byKey.set(key, number);
    this.labels.push(labels);
    return number;
  }
}
