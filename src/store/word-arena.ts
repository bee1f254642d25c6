/**
 * The 32-bit words of every sample buffer of a history (series-buffer.ts), handed out as ranges of a few large
 * shared slabs, so that a buffer holds small integers instead of a typed array of its own (at 1,000 queues, a
 * `Uint32Array`, its `ArrayBuffer` and their backing-store bookkeeping per series cost more than the samples).
 *
 * Contract:
 * - `allocate(words)` hands out a range of `rangeWords(words)` words: an integer naming it, whose words are
 *   `slabOf(range)[offsetOf(range) …]`. A range's words are its holder's until it calls `free(range, capacity)`
 *   with that capacity; they are not cleared in between (a holder writes before it reads).
 * - Range sizes go up by quarters of a power of two (16, 20, 24, 28, 32, 40, 48, …): at most a fifth of a range is
 *   rounding.
 * - Ranges up to `SLAB_WORDS / 8` words come out of shared slabs of `SLAB_WORDS` (1 MiB). A freed range merges with
 *   the free words on either side of it in its slab, and a slab left wholly free is dropped; a range is cut from the
 *   smallest free run that holds it for sure (the runs of the smallest size bucket that can), the rest staying free.
 *   So words freed by buffers that moved to larger ranges serve the next ones, whatever their sizes. A larger range
 *   is a slab of its own, dropped when freed.
 * - `slabOf` returns the same array for every range of a slab while any range of it is handed out, so a holder may
 *   keep it (it changes only when the holder's range does).
 */

/** Words of a shared slab: 1 MiB. A range is named `slab * SLAB_WORDS + offset`. */
export const SLAB_WORDS = 262_144;
/** The smallest range. */
export const MIN_RANGE_WORDS = 16;
/** Larger ranges get a slab of their own. */
const LARGEST_SHARED_RANGE = SLAB_WORDS / 8;
const NO_WORDS = new Uint32Array(0);

/** The size of the range that holds `words` words: the next quarter of a power of two, at least `MIN_RANGE_WORDS`. */
export function rangeWords(words: number): number {
  if (words <= MIN_RANGE_WORDS) return MIN_RANGE_WORDS;
  const quarter = quarterOfPowerBelow(words);
  return (Math.ceil(words / quarter) * quarter) | 0;
}

/** A quarter of the largest power of two not above `words` (16 to 2^31 - 1). */
function quarterOfPowerBelow(words: number): number {
  return 1 << (29 - Math.clz32(words));
}

/**
 * The bucket of free runs of `words` words (at least `MIN_RANGE_WORDS`): bucket `b` holds the runs from the `b`-th
 * range size up to the next, so any run of a bucket holds a range of the bucket's first size.
 */
function bucketOf(words: number): number {
  const power = 31 - Math.clz32(words);
  return (power - 4) * 4 + ((words >>> (power - 2)) & 3);
}

export class WordArena {
  /** Slabs by index; a dropped slab leaves `NO_WORDS` and its index for reuse. */
  readonly #slabs: Uint32Array[] = [];
  readonly #droppedSlabs: number[] = [];
  #slabWords = 0;
  /** Free runs of the shared slabs: their length by first word, their first word by end. */
  readonly #freeLength = new Map<number, number>();
  readonly #freeEndingAt = new Map<number, number>();
  /** Free runs of at least `MIN_RANGE_WORDS` by `bucketOf` their length (shorter ones wait to be merged). */
  readonly #buckets: Set<number>[] = [];

  /** The slab holding `range`. */
  slabOf(range: number): Uint32Array {
    return this.#slabs[Math.floor(range / SLAB_WORDS)] as Uint32Array;
  }

  /** The offset of `range`'s first word in its slab. */
  offsetOf(range: number): number {
    return range % SLAB_WORDS;
  }

  /** A range of `rangeWords(words)` words (see the contract). */
  allocate(words: number): number {
    const capacity = rangeWords(words);
    if (capacity > LARGEST_SHARED_RANGE) return this.#newSlab(capacity) * SLAB_WORDS;
    let run = this.#smallestFreeRun(bucketOf(capacity));
    if (run === undefined) {
      run = this.#newSlab(SLAB_WORDS) * SLAB_WORDS;
      this.#addFree(run, SLAB_WORDS);
    }
    const length = this.#takeFree(run);
    if (length > capacity) this.#addFree(run + capacity, length - capacity);
    return run;
  }

  /** Gives back a range `allocate` handed out with this capacity. */
  free(range: number, capacity: number): void {
    if (capacity > LARGEST_SHARED_RANGE) {
      this.#dropSlab(Math.floor(range / SLAB_WORDS));
      return;
    }
    let start = range;
    let end = range + capacity;
    const before = start % SLAB_WORDS === 0 ? undefined : this.#freeEndingAt.get(start);
    if (before !== undefined) {
      this.#takeFree(before);
      start = before;
    }
    const after = end % SLAB_WORDS === 0 ? undefined : this.#freeLength.get(end);
    if (after !== undefined) end += this.#takeFree(end);
    if (end - start === SLAB_WORDS) this.#dropSlab(Math.floor(start / SLAB_WORDS));
    else this.#addFree(start, end - start);
  }

  /** Bytes of the slabs: every range, handed out or free. */
  bytes(): number {
    return this.#slabWords * 4;
  }

  /** Bytes of the shared slabs not handed out. */
  freeBytes(): number {
    let words = 0;
    for (const length of this.#freeLength.values()) words += length;
    return words * 4;
  }

  /** A free run of the bucket `from` or a later one (the earliest that has one). */
  #smallestFreeRun(from: number): number | undefined {
    const buckets = this.#buckets;
    for (let b = from; b < buckets.length; b++) {
      const bucket = buckets[b];
      if (bucket !== undefined && bucket.size > 0) return bucket.values().next().value;
    }
    return undefined;
  }

  #addFree(start: number, length: number): void {
    this.#freeLength.set(start, length);
    this.#freeEndingAt.set(start + length, start);
    if (length < MIN_RANGE_WORDS) return;
    const b = bucketOf(length);
    let bucket = this.#buckets[b];
    if (bucket === undefined) {
      for (let k = this.#buckets.length; k < b; k++) this.#buckets[k] = new Set();
      bucket = new Set();
      this.#buckets[b] = bucket;
    }
    bucket.add(start);
  }

  /** Takes the free run starting at `start` out of the free runs; returns its length. */
  #takeFree(start: number): number {
    const length = this.#freeLength.get(start) as number;
    this.#freeLength.delete(start);
    this.#freeEndingAt.delete(start + length);
    if (length >= MIN_RANGE_WORDS) this.#buckets[bucketOf(length)]?.delete(start);
    return length;
  }

  #newSlab(words: number): number {
    const slab = this.#droppedSlabs.pop() ?? this.#slabs.length;
    this.#slabs[slab] = new Uint32Array(words);
    this.#slabWords += words;
    return slab;
  }

  #dropSlab(slab: number): void {
    this.#slabWords -= (this.#slabs[slab] as Uint32Array).length;
    this.#slabs[slab] = NO_WORDS;
    this.#droppedSlabs.push(slab);
  }
}
