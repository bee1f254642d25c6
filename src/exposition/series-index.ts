/**
 * Series key → series id while parsing, without allocating anything per line.
 *
 * A key is either a range of the parsed text (the line's own text, when it is already the
 * canonical key) or a string (built for lines whose labels needed re-ordering or re-escaping).
 * Both kinds hash with FNV-1a over the same characters, so one series is found whichever way its
 * lines spell it (from a random offset basis per process: `HASH_SEED`). Open addressing with linear
 * probing over an `Int32Array` (slot = id + 1, 0 = empty), at most half full.
 */
import { randomBytes } from 'node:crypto';
import { isMainThread, workerData } from 'node:worker_threads';

/**
 * The offset basis of this process's key hashes: random, not FNV's published one, so that a hostile target cannot
 * craft a page whose series keys all collide (each lookup would become a scan, and a page of 10,000 series a
 * hundred million comparisons). Parse workers are given it (`workerData.hashSeed`), so hashes agree across threads.
 */
export const HASH_SEED: number = workerHashSeed() ?? randomBytes(4).readInt32LE(0);
export const HASH_PRIME = 0x01000193;

/** The seed a parse worker was started with, when this module runs in one. */
function workerHashSeed(): number | undefined {
  const data = workerData as { hashSeed?: unknown } | null | undefined;
  return !isMainThread && typeof data?.hashSeed === 'number' ? data.hashSeed : undefined;
}

/** Final avalanche applied to an FNV state. */
export function hashFinish(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  return x ^ (x >>> 13);
}

/** The hash of `text[start, end)`. */
export function hashRange(text: string, start: number, end: number): number {
  let h = HASH_SEED;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), HASH_PRIME);
  return hashFinish(h);
}

export class SeriesIndex {
  readonly #text: string;
  #count = 0;
  #hashes = new Int32Array(1024);
  /** Key range in the text, or -1 when the key is in `#strings`. */
  #starts = new Int32Array(1024);
  #ends = new Int32Array(1024);
  readonly #strings = new Map<number, string>();
  #slots = new Int32Array(2048);
  #mask = 2047;

  constructor(text: string) {
    this.#text = text;
  }

  get count(): number {
    return this.#count;
  }

  /** Key ranges per id (`start` is -1 for keys held as strings). */
  ranges(): { starts: Int32Array; ends: Int32Array } {
    return { starts: this.#starts.subarray(0, this.#count), ends: this.#ends.subarray(0, this.#count) };
  }

  /** Key hash per id (`hashRange` of the key). */
  hashes(): Int32Array {
    return this.#hashes.subarray(0, this.#count);
  }

  /** Keys held as strings, by id. */
  strings(): ReadonlyMap<number, string> {
    return this.#strings;
  }

  /** The id of the key `text[start, end)` with hash `h`, or -1. */
  findRange(start: number, end: number, h: number): number {
    const text = this.#text;
    const slots = this.#slots;
    const mask = this.#mask;
    const len = end - start;
    let i = h & mask;
    for (;;) {
      const slot = slots[i] as number;
      if (slot === 0) return -1;
      const id = slot - 1;
      if (this.#hashes[id] === h) {
        const s = this.#starts[id] as number;
        if (s >= 0) {
          if ((this.#ends[id] as number) - s === len && sameRange(text, start, s, len)) return id;
        } else if (sameAsString(text, start, len, this.#strings.get(id) as string)) {
          return id;
        }
      }
      i = (i + 1) & mask;
    }
  }

  /** The id of `key` (hash `h`), or -1. */
  findString(key: string, h: number): number {
    const text = this.#text;
    const slots = this.#slots;
    const mask = this.#mask;
    let i = h & mask;
    for (;;) {
      const slot = slots[i] as number;
      if (slot === 0) return -1;
      const id = slot - 1;
      if (this.#hashes[id] === h) {
        const s = this.#starts[id] as number;
        if (s >= 0) {
          if (sameAsString(text, s, (this.#ends[id] as number) - s, key)) return id;
        } else if (this.#strings.get(id) === key) {
          return id;
        }
      }
      i = (i + 1) & mask;
    }
  }

  /** Adds a key known to be absent, as a text range; returns its id. */
  addRange(start: number, end: number, h: number): number {
    const id = this.#reserve(h);
    this.#starts[id] = start;
    this.#ends[id] = end;
    return id;
  }

  /** Adds a key known to be absent, as a string; returns its id. */
  addString(key: string, h: number): number {
    const id = this.#reserve(h);
    this.#starts[id] = -1;
    this.#ends[id] = -1;
    this.#strings.set(id, key);
    return id;
  }

  #reserve(h: number): number {
    const id = this.#count;
    if ((id + 1) * 2 > this.#slots.length) this.#grow();
    if (id === this.#hashes.length) {
      this.#hashes = growInt32(this.#hashes);
      this.#starts = growInt32(this.#starts);
      this.#ends = growInt32(this.#ends);
    }
    this.#hashes[id] = h;
    this.#count = id + 1;
    this.#place(id, h);
    return id;
  }

  #place(id: number, h: number): void {
    const slots = this.#slots;
    const mask = this.#mask;
    let i = h & mask;
    while (slots[i] !== 0) i = (i + 1) & mask;
    slots[i] = id + 1;
  }

  #grow(): void {
    const size = this.#slots.length * 2;
    this.#slots = new Int32Array(size);
    this.#mask = size - 1;
    for (let id = 0; id < this.#count; id++) this.#place(id, this.#hashes[id] as number);
  }
}

function growInt32(a: Int32Array): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(a.length * 2);
  grown.set(a);
  return grown;
}

function sameRange(text: string, a: number, b: number, len: number): boolean {
  for (let i = 0; i < len; i++) {
    if (text.charCodeAt(a + i) !== text.charCodeAt(b + i)) return false;
  }
  return true;
}

function sameAsString(text: string, start: number, len: number, key: string): boolean {
  if (key.length !== len) return false;
  for (let i = 0; i < len; i++) {
    if (text.charCodeAt(start + i) !== key.charCodeAt(i)) return false;
  }
  return true;
}
