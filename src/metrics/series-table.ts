/**
 * The series of one parsed page: series id → series key, metric name, labels and family.
 *
 * Keys are held as ranges of one string (the parsed text, or, for a table handed over from a
 * worker thread, one string holding every key), so that building or receiving a table costs no
 * per-series allocation; key strings, names and labels are made on demand.
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
  readonly #text: string;
  /** Key of series i is `#text[#starts[i], #ends[i])`, or `#strings.get(i)` when `#starts[i]` is -1. */
  readonly #starts: Int32Array | Uint32Array;
  readonly #ends: Int32Array | Uint32Array;
  readonly #strings: ReadonlyMap<number, string> | undefined;
  readonly #labels: (Labels | undefined)[] = [];

  private constructor(
    text: string,
    starts: Int32Array | Uint32Array,
    ends: Int32Array | Uint32Array,
    strings: ReadonlyMap<number, string> | undefined,
    families: Int32Array,
  ) {
    this.count = families.length;
    this.families = families;
    this.#text = text;
    this.#starts = starts;
    this.#ends = ends;
    this.#strings = strings !== undefined && strings.size > 0 ? strings : undefined;
  }

  /** Keys as ranges of `text` (start -1: the key is in `strings`). */
  static fromText(
    text: string,
    starts: Int32Array,
    ends: Int32Array,
    strings: ReadonlyMap<number, string>,
    families: Int32Array,
  ): SeriesTable {
    return new SeriesTable(text, starts, ends, strings, families);
  }

  static fromKeys(keys: readonly string[], families: Int32Array): SeriesTable {
    const offsets = new Uint32Array(keys.length + 1);
    let total = 0;
    for (let i = 0; i < keys.length; i++) {
      offsets[i] = total;
      total += (keys[i] as string).length;
    }
    offsets[keys.length] = total;
    return new SeriesTable(keys.join(''), offsets.subarray(0, keys.length), offsets.subarray(1), undefined, families);
  }

  static fromData(data: SeriesTableData): SeriesTable {
    const n = data.families.length;
    return new SeriesTable(data.blob, data.offsets.subarray(0, n), data.offsets.subarray(1), undefined, data.families);
  }

  /** The series key of series `id` (0 ≤ id < count). */
  key(id: number): string {
    const start = this.#starts[id] as number;
    if (this.#strings !== undefined && (start === -1 || start === 0xffffffff)) return this.#strings.get(id) as string;
    return this.#text.slice(start, this.#ends[id]);
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

  /** The form a worker posts back: all keys in one string; `families` and `offsets` buffers can be transferred. */
  toData(): SeriesTableData {
    const offsets = new Uint32Array(this.count + 1);
    const parts: string[] = [];
    let total = 0;
    for (let i = 0; i < this.count; i++) {
      const key = this.key(i);
      offsets[i] = total;
      total += key.length;
      parts.push(key);
    }
    offsets[this.count] = total;
    return { blob: parts.join(''), offsets, families: this.families.slice() };
  }
}

/**
 * A copy of `s` that does not keep a larger string alive (V8 represents slices as views of their
 * parent string). Use it for strings that outlive a parsed page.
 */
export function detachString(s: string): string {
  return s.length < 13 ? s : ` ${s}`.slice(1);
}
