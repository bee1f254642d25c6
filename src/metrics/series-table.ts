/**
 * The series of one parsed page: series id → series key, metric name, labels and family.
 *
 * Built by the parser with one key string per series; a table handed over from a worker thread
 * holds all keys in one string plus offsets instead, so that receiving it costs no per-series work
 * on the receiving thread. Names and labels are decoded from the key on demand.
 *
 * Keys may be slices of a large parsed text: a consumer that keeps a key beyond the page's
 * lifetime should copy it (see `detachString`).
 */
import { keyLabels, keyMetricName, type Labels } from './labels.js';

/** The transferable form of a table (see `SeriesTable.toData`). */
export interface SeriesTableData {
  readonly blob: string;
  /** `count + 1` offsets into `blob`. */
  readonly offsets: Uint32Array;
  readonly families: Int32Array;
}

export class SeriesTable {
  readonly count: number;
  /** Family index (into `ParsedPage.families`) of each series. */
  readonly families: Int32Array;
  readonly #keys: readonly string[] | undefined;
  readonly #blob: string;
  readonly #offsets: Uint32Array | undefined;
  readonly #labels: (Labels | undefined)[] = [];

  private constructor(
    count: number,
    families: Int32Array,
    keys: readonly string[] | undefined,
    blob: string,
    offsets: Uint32Array | undefined,
  ) {
    this.count = count;
    this.families = families;
    this.#keys = keys;
    this.#blob = blob;
    this.#offsets = offsets;
  }

  static fromKeys(keys: readonly string[], families: Int32Array): SeriesTable {
    return new SeriesTable(keys.length, families, keys, '', undefined);
  }

  static fromData(data: SeriesTableData): SeriesTable {
    return new SeriesTable(data.families.length, data.families, undefined, data.blob, data.offsets);
  }

  /** The series key of series `id` (0 ≤ id < count). */
  key(id: number): string {
    if (this.#keys !== undefined) return this.#keys[id] as string;
    const o = this.#offsets as Uint32Array;
    return this.#blob.slice(o[id], o[id + 1]);
  }

  name(id: number): string {
    return keyMetricName(this.key(id));
  }

  /** Labels of series `id` (decoded once, then cached). */
  labels(id: number): Labels {
    let l = this.#labels[id];
    if (l === undefined) {
      l = keyLabels(this.key(id));
      this.#labels[id] = l;
    }
    return l;
  }

  /** The form a worker posts back; `families` and `offsets` buffers can be transferred. */
  toData(): SeriesTableData {
    if (this.#keys === undefined) {
      return { blob: this.#blob, offsets: this.#offsets as Uint32Array, families: this.families };
    }
    const offsets = new Uint32Array(this.count + 1);
    let total = 0;
    for (let i = 0; i < this.count; i++) {
      offsets[i] = total;
      total += (this.#keys[i] as string).length;
    }
    offsets[this.count] = total;
    return { blob: this.#keys.join(''), offsets, families: this.families };
  }
}

/**
 * A copy of `s` that does not keep a larger string alive (V8 represents slices as views of their
 * parent string). Use it for strings that outlive a parsed page.
 */
export function detachString(s: string): string {
  return s.length < 13 ? s : ` ${s}`.slice(1);
}
