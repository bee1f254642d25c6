/**
 * The history's string table: every label name, label value and metric name it holds is one shared
 * string, detached from the page text it was parsed out of (see `detachString`), so that a scraped
 * page can be collected once appended and a string held by many series is stored once.
 *
 * Contract:
 * - `intern(s)` returns the table's copy of a string equal to `s`, adding a detached copy when new.
 * - The table only grows until `rebuild` replaces it with the strings a walk of the live data
 *   reports; strings of forgotten series can be collected then. `size` is the number of strings held.
 */
import { detachString } from '../exposition/series-table.js';

export class StringTable {
  #strings = new Map<string, string>();

  get size(): number {
    return this.#strings.size;
  }

  intern(s: string): string {
    let x = this.#strings.get(s);
    if (x === undefined) {
      x = detachString(s);
      this.#strings.set(x, x);
    }
    return x;
  }

  /** Keeps only the strings `collect` passes to `keep`. */
  rebuild(collect: (keep: (s: string) => void) => void): void {
    const live = new Map<string, string>();
    collect((s) => {
      live.set(s, s);
    });
    this.#strings.clear();
    for (const [k, v] of live) this.#strings.set(k, v);
  }
}
