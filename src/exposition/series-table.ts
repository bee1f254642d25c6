/**
 * The series of one parsed page: series id → series key, metric name, labels and family.
 *
 * Keys are held without one string per series, so that building or receiving a table costs no
 * per-series allocation: as ranges of the parsed text (a table built in this thread), or as UTF-8
 * bytes plus offsets (a table handed over from a worker thread: its buffers are transferred, not
 * copied). Key strings, names and labels are made on demand; `keyEquals`, `keyPartEnd` and `hashes` let a
 * store recognise a series it already holds without making its key string at all.
 *
 * Keys may be slices of a large parsed text: a consumer that keeps a key beyond the page's
 * lifetime should copy it (see `detachString`).
 */
import { keyLabels, keyMetricName, type Labels } from './labels.js';
import { hashRange } from './series-index.js';

/** The transferable form of a table (see `SeriesTable.toData`); every buffer can be transferred. */
export interface SeriesTableData {
  /** Every key, UTF-8, one after the other. */
  readonly bytes: Uint8Array;
  /** `count + 1` byte offsets into `bytes`. */
  readonly offsets: Uint32Array;
  readonly families: Int32Array;
  readonly hashes: Int32Array;
}

const decoder = new TextDecoder('utf-8');
const encoder = new TextEncoder();

interface TextKeys {
  readonly kind: 'text';
  readonly text: string;
  /** Key of series i is `text[starts[i], ends[i])`, or `strings.get(i)` when `starts[i]` is -1. */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly strings: ReadonlyMap<number, string>;
}

interface ByteKeys {
  readonly kind: 'bytes';
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
}

export class SeriesTable {
  readonly count: number;
  /** Family index (into `ParsedPage.families`) of each series. */
  readonly families: Int32Array;
  /** `hashRange(key)` of each series. */
  readonly hashes: Int32Array;
  readonly #keys: TextKeys | ByteKeys;
  readonly #labels: (Labels | undefined)[] = [];

  private constructor(keys: TextKeys | ByteKeys, families: Int32Array, hashes: Int32Array) {
    this.count = families.length;
    this.families = families;
    this.hashes = hashes;
    this.#keys = keys;
  }

  /** Keys as ranges of `text` (start -1: the key is in `strings`). */
  static fromText(
    text: string,
    starts: Int32Array,
    ends: Int32Array,
    strings: ReadonlyMap<number, string>,
    families: Int32Array,
    hashes: Int32Array,
  ): SeriesTable {
    return new SeriesTable({ kind: 'text', text, starts, ends, strings }, families, hashes);
  }

  static fromKeys(keys: readonly string[], families: Int32Array): SeriesTable {
    const text = keys.join('');
    const starts = new Int32Array(keys.length);
    const ends = new Int32Array(keys.length);
    let at = 0;
    keys.forEach((k, i) => {
      starts[i] = at;
      at += k.length;
      ends[i] = at;
    });
    const hashes = Int32Array.from(keys, (k) => hashRange(k, 0, k.length));
    return new SeriesTable({ kind: 'text', text, starts, ends, strings: new Map() }, families, hashes);
  }

  static fromData(data: SeriesTableData): SeriesTable {
    return new SeriesTable({ kind: 'bytes', bytes: data.bytes, offsets: data.offsets }, data.families, data.hashes);
  }

  /** The series key of series `id` (0 ≤ id < count). */
  key(id: number): string {
    const k = this.#keys;
    if (k.kind === 'bytes') return decoder.decode(k.bytes.subarray(k.offsets[id], k.offsets[id + 1]));
    const start = k.starts[id] as number;
    return start === -1 ? (k.strings.get(id) as string) : k.text.slice(start, k.ends[id]);
  }

  /** Whether the key of series `id` is `s`, without making the key string. */
  keyEquals(id: number, s: string): boolean {
    const k = this.#keys;
    if (k.kind === 'bytes') return utf8Equals(k.bytes, k.offsets[id] as number, k.offsets[id + 1] as number, s);
    const start = k.starts[id] as number;
    if (start === -1) return k.strings.get(id) === s;
    return s.length === (k.ends[id] as number) - start && k.text.startsWith(s, start);
  }

  /** Length of the key of series `id` in the units `keyPartEnd` counts: UTF-16 code units, or UTF-8 bytes for a table from `fromData`. */
  keyLength(id: number): number {
    const k = this.#keys;
    if (k.kind === 'bytes') return (k.offsets[id + 1] as number) - (k.offsets[id] as number);
    const start = k.starts[id] as number;
    return start === -1 ? (k.strings.get(id) as string).length : (k.ends[id] as number) - start;
  }

  /**
   * Where `s` ends in the key of series `id` when the key holds it at position `at` (counted as `keyLength` does),
   * -1 otherwise: compares a key with a text written part by part, without making either string.
   */
  keyPartEnd(id: number, at: number, s: string): number {
    const k = this.#keys;
    if (k.kind === 'bytes') {
      const start = k.offsets[id] as number;
      const end = utf8PrefixEnd(k.bytes, start + at, k.offsets[id + 1] as number, s);
      return end === -1 ? -1 : end - start;
    }
    const start = k.starts[id] as number;
    if (start === -1) return (k.strings.get(id) as string).startsWith(s, at) ? at + s.length : -1;
    return at + s.length <= (k.ends[id] as number) - start && k.text.startsWith(s, start + at) ? at + s.length : -1;
  }

  /**
   * Whether the key of any series holds `fragment`: one search of the keys' bytes, or of the parsed text and
   * then of each key only when the text holds it (so a page without it costs one search).
   */
  keysInclude(fragment: string): boolean {
    const k = this.#keys;
    if (k.kind === 'bytes')
      return Buffer.from(k.bytes.buffer, k.bytes.byteOffset, k.bytes.byteLength).includes(fragment);
    for (const key of k.strings.values()) if (key.includes(fragment)) return true;
    if (!k.text.includes(fragment)) return false;
    for (let id = 0; id < this.count; id++) {
      if ((k.starts[id] as number) !== -1 && this.key(id).includes(fragment)) return true;
    }
    return false;
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

  /** The form a worker posts back: all keys as UTF-8 bytes; every buffer in it can be transferred. */
  toData(): SeriesTableData {
    const k = this.#keys;
    if (k.kind === 'bytes') {
      return { bytes: k.bytes, offsets: k.offsets, families: this.families.slice(), hashes: this.hashes.slice() };
    }
    const parts: string[] = [];
    for (let i = 0; i < this.count; i++) parts.push(this.key(i));
    const bytes = encoder.encode(parts.join(''));
    const offsets = new Uint32Array(this.count + 1);
    let at = 0;
    for (let i = 0; i < this.count; i++) {
      offsets[i] = at;
      at += utf8Length(parts[i] as string);
    }
    offsets[this.count] = at;
    return { bytes, offsets, families: this.families.slice(), hashes: this.hashes.slice() };
  }
}

/** UTF-8 length of `s` (lone surrogates count as U+FFFD, as `TextEncoder` writes them). */
function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Whether `bytes[start, end)` is the UTF-8 encoding of `s`. */
function utf8Equals(bytes: Uint8Array, start: number, end: number, s: string): boolean {
  return utf8PrefixEnd(bytes, start, end, s) === end;
}

/** Where the UTF-8 encoding of `s` ends when `bytes[start, end)` begins with it, -1 otherwise. */
function utf8PrefixEnd(bytes: Uint8Array, start: number, end: number, s: string): number {
  let p = start;
  for (let i = 0; i < s.length; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      if (p >= end || bytes[p] !== c) return -1;
      p++;
      continue;
    }
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      c = 0x10000 + ((c - 0xd800) << 10) + (s.charCodeAt(i + 1) - 0xdc00);
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      c = 0xfffd;
    }
    if (c < 0x800) {
      if (p + 2 > end || bytes[p] !== (0xc0 | (c >> 6)) || bytes[p + 1] !== (0x80 | (c & 0x3f))) return -1;
      p += 2;
    } else if (c < 0x10000) {
      if (
        p + 3 > end ||
        bytes[p] !== (0xe0 | (c >> 12)) ||
        bytes[p + 1] !== (0x80 | ((c >> 6) & 0x3f)) ||
        bytes[p + 2] !== (0x80 | (c & 0x3f))
      ) {
        return -1;
      }
      p += 3;
    } else {
      if (
        p + 4 > end ||
        bytes[p] !== (0xf0 | (c >> 18)) ||
        bytes[p + 1] !== (0x80 | ((c >> 12) & 0x3f)) ||
        bytes[p + 2] !== (0x80 | ((c >> 6) & 0x3f)) ||
        bytes[p + 3] !== (0x80 | (c & 0x3f))
      ) {
        return -1;
      }
      p += 4;
    }
  }
  return p;
}

/**
 * A flat copy of `s` that does not keep a larger string alive (V8 represents slices as views of
 * their parent string, and compares them more slowly). Use it for strings that outlive a parsed page.
 */
export function detachString(s: string): string {
  if (s.length < 13) return s;
  // Latin-1 when every code unit fits (a one-byte string), UTF-16 otherwise: both round-trip exactly.
  return WIDE.test(s) ? Buffer.from(s, 'utf16le').toString('utf16le') : Buffer.from(s, 'latin1').toString('latin1');
}

const WIDE = /[^\u0000-\u00ff]/;
