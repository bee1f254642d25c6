/**
 * The samples of one series: a bounded, time-ordered buffer, packed (packed-blocks.ts) in one range of words of
 * the history's word arena (word-arena.ts).
 *
 * Invariants: samples are numbered in order of arrival; live samples are numbers `[start, end)`, strictly
 * increasing in time. They sit in blocks of `BLOCK_SAMPLES` (every block full but the last), laid out back to
 * back in the buffer's range from `#firstBlockAt`; block `b` holds numbers `#first + b * BLOCK_SAMPLES` on, so
 * there are `ceil((end - #first) / BLOCK_SAMPLES)` blocks. Samples before `start` in the first block are expired
 * and go with their block. Stale markers (Prometheus's "this series
 * vanished" points) are kept apart in `staleAt`, ascending, never at the time of a sample.
 *
 * Limits (shared by all buffers of a history): at most `maxSamples` samples (the oldest is dropped), and samples
 * older than the newest point minus `retentionMs` are dropped at each append.
 *
 * Words: the buffer holds one range of the arena at a time, moving to a larger one (and freeing the old) when its
 * blocks outgrow it; expired blocks leave their words to the next blocks. `release()` gives the range back: the
 * owner calls it when it drops the buffer (a buffer it forgets without is lost to the arena until the arena goes).
 * A released buffer is empty, and appending to it again takes a new range.
 *
 * Block offsets: the first and the last block's are held; a middle block's is found by walking the block headers
 * from the first while the buffer has at most `WALKED_BLOCKS` blocks (a buffer of the default 121 samples has at
 * most 3), and held in `#blockIndex` beyond, so that long recordings are read in O(1) too: no array per buffer.
 *
 * Reading: `time(i)` and `value(i)` cost O(1); `read` copies a run of samples into arrays the caller owns, and
 * `views` returns copies (the packed samples cannot be viewed in place).
 */
import {
  appendPlanned,
  BLOCK_SAMPLES,
  blockCount,
  blockSize,
  blockTime,
  blockValue,
  blockWords,
  planAppend,
  RAW,
  readBlock,
  startBlock,
} from './packed-blocks.js';
import { rangeWords, type WordArena } from './word-arena.js';

export const AppendOutcome = {
  Appended: 0,
  /** Same timestamp and value as the newest sample: ignored, as Prometheus does. */
  Same: 1,
  /** Same timestamp, different value. */
  Duplicate: 2,
  /** Older than the newest sample or stale marker. */
  OutOfOrder: 3,
} as const;
export type AppendOutcome = (typeof AppendOutcome)[keyof typeof AppendOutcome];

export interface BufferLimits {
  readonly maxSamples: number;
  readonly retentionMs: number;
}

/** What every buffer of a history shares: its limits and the arena its words are in. */
export interface BufferSpace extends BufferLimits {
  readonly arena: WordArena;
}

/** Words a new buffer starts with: a block header and a few packed samples. */
const INITIAL_WORDS = 16;
/** Words one sample can take in a new block (raw time and value). */
const NEW_BLOCK_WORDS = blockWords(1, RAW, RAW);
const BLOCK_SHIFT = Math.log2(BLOCK_SAMPLES);
const IN_BLOCK = BLOCK_SAMPLES - 1;
/** Most blocks a buffer holds without an index of their offsets (a middle block is then at most 2 headers away). */
const WALKED_BLOCKS = 4;

const NO_WORDS = new Uint32Array(0);
const NO_RANGE = -1;

export class SeriesBuffer {
  readonly #space: BufferSpace;
  /** The arena's slab holding the buffer's range (`NO_WORDS` without a range). */
  #words: Uint32Array = NO_WORDS;
  /** The range (`NO_RANGE` without one) and the offset in `#words` after its last word. */
  #range = NO_RANGE;
  #rangeEnd = 0;
  /** Word offsets in `#words` of the first and of the last block (meaningless without blocks). */
  #firstBlockAt = 0;
  #lastBlockAt = 0;
  /** Word offsets of every block, oldest first, while there are more than `WALKED_BLOCKS` (see the header). */
  #blockIndex: number[] | undefined;
  /** Number of the first sample of the first block. */
  #first = 0;
  /** Offset in `#words` after the last block (the range's start if none). */
  #used = 0;
  /** Time of sample `end - 1` (-Infinity when empty): read on every append, so kept unpacked. */
  #newestTime = Number.NEGATIVE_INFINITY;
  start = 0;
  end = 0;
  staleAt: number[] | undefined;

  /**
   * `space`: the limits and the arena (every buffer of a history shares one). `initialSamples`: how many samples to
   * make room for at once (a series restored or replayed whole).
   */
  constructor(space: BufferSpace, initialSamples = 0) {
    this.#space = space;
    const samples = Math.min(initialSamples, space.maxSamples);
    this.#moveTo(Math.max(INITIAL_WORDS, Math.ceil(samples / 2) + NEW_BLOCK_WORDS), 0, 0);
  }

  get length(): number {
    return this.end - this.start;
  }

  /** Time of sample `i` (start ≤ i < end). */
  time(i: number): number {
    const k = i - this.#first;
    return blockTime(this.#words, this.#blockAt(k >>> BLOCK_SHIFT), k & IN_BLOCK);
  }

  /** Value of sample `i` (start ≤ i < end). */
  value(i: number): number {
    const k = i - this.#first;
    return blockValue(this.#words, this.#blockAt(k >>> BLOCK_SHIFT), k & IN_BLOCK);
  }

  /** Blocks held (see the header). */
  #blockCount(): number {
    return (this.end - this.#first + IN_BLOCK) >>> BLOCK_SHIFT;
  }

  /** Word offset of block `b` (0 ≤ b < blocks; see the header). */
  #blockAt(b: number): number {
    if (b === 0) return this.#firstBlockAt;
    const index = this.#blockIndex;
    if (index !== undefined) return index[b] as number;
    if (b === this.#blockCount() - 1) return this.#lastBlockAt;
    let at = this.#firstBlockAt;
    for (let k = 0; k < b; k++) at += blockSize(this.#words, at);
    return at;
  }

  /** Copies the times and values of samples `[i, j)` into `t` and `v` from index `out`. */
  read(i: number, j: number, t: Float64Array, v: Float64Array, out = 0): void {
    let k = i - this.#first;
    const stop = j - this.#first;
    let o = out;
    // Blocks are back to back: each one after the first read starts where the one before it ends.
    let at = k < stop ? this.#blockAt(k >>> BLOCK_SHIFT) : 0;
    while (k < stop) {
      const b = k >>> BLOCK_SHIFT;
      const from = k & IN_BLOCK;
      const to = Math.min(BLOCK_SAMPLES, stop - (b << BLOCK_SHIFT));
      readBlock(this.#words, at, from, to, t, v, o);
      o += to - from;
      k += to - from;
      if (k < stop) at += blockSize(this.#words, at);
    }
  }

  /** The times and values of samples `[i, j)`, copied. */
  views(i: number, j: number): { t: Float64Array; v: Float64Array } {
    const n = Math.max(0, j - i);
    const t = new Float64Array(n);
    const v = new Float64Array(n);
    if (n > 0) this.read(i, j, t, v);
    return { t, v };
  }

  /** Time of the newest sample (stale markers aside), or -Infinity when there is none. */
  newestSampleTime(): number {
    return this.#newestTime;
  }

  /** Time of the newest sample or stale marker, or -Infinity. */
  newest(): number {
    const s = this.staleAt;
    const lastStale = s === undefined || s.length === 0 ? Number.NEGATIVE_INFINITY : (s[s.length - 1] as number);
    return Math.max(lastStale, this.#newestTime);
  }

  /** True when the newest point is a stale marker. */
  isStale(): boolean {
    const s = this.staleAt;
    if (s === undefined || s.length === 0) return false;
    return this.end === this.start || (s[s.length - 1] as number) > this.#newestTime;
  }

  append(time: number, value: number): AppendOutcome {
    const end = this.end;
    if (end > this.start) {
      const last = this.#newestTime;
      if (time <= last) {
        if (time < last) return AppendOutcome.OutOfOrder;
        const lv = this.value(end - 1);
        return lv === value || (Number.isNaN(lv) && Number.isNaN(value)) ? AppendOutcome.Same : AppendOutcome.Duplicate;
      }
    }
    const s = this.staleAt;
    if (s !== undefined && s.length > 0 && time <= (s[s.length - 1] as number)) return AppendOutcome.OutOfOrder;
    this.expire(time);
    if (this.end - this.start >= this.#space.maxSamples) this.#dropTo(this.start + 1);
    const blocks = this.#blockCount();
    if (blocks === 0 || blockCount(this.#words, this.#lastBlockAt) === BLOCK_SAMPLES) {
      this.#reserve(NEW_BLOCK_WORDS);
      const at = this.#used;
      if (blocks === 0) {
        this.#first = this.end;
        this.#firstBlockAt = at;
      }
      startBlock(this.#words, at, time, value);
      this.#lastBlockAt = at;
      if (this.#blockIndex !== undefined) this.#blockIndex.push(at);
      else if (blocks === WALKED_BLOCKS) this.#blockIndex = this.#walkBlocks(blocks + 1);
      this.#used = at + blockSize(this.#words, at);
    } else {
      const open = this.#lastBlockAt;
      const need = planAppend(this.#words, open, time, value);
      this.#reserve(need - (this.#used - open));
      const h = this.#lastBlockAt;
      appendPlanned(this.#words, h, time, value);
      this.#used = h + need;
    }
    this.end++;
    this.#newestTime = time;
    return AppendOutcome.Appended;
  }

  /** Adds a stale marker at `time` unless the series is empty, already stale or has a newer point. */
  markStale(time: number): boolean {
    if (this.isStale() || time <= this.newest() || this.end === this.start) return false;
    this.expire(time);
    this.staleAt ??= [];
    this.staleAt.push(time);
    return true;
  }

  /** Drops samples and stale markers older than `now - retentionMs`. */
  expire(now: number): void {
    const cutoff = now - this.#space.retentionMs;
    if (!(cutoff > Number.NEGATIVE_INFINITY)) return;
    let start = this.start;
    while (start < this.end && this.time(start) < cutoff) start++;
    this.#dropTo(start);
    const s = this.staleAt;
    if (s !== undefined && s.length > 0 && (s[0] as number) < cutoff) {
      let k = 0;
      while (k < s.length && (s[k] as number) < cutoff) k++;
      s.splice(0, k);
    }
  }

  /** Makes `start` the first live sample: blocks wholly before it go; with nothing left, the buffer restarts. */
  #dropTo(start: number): void {
    this.start = start;
    if (start === this.end) {
      this.#restart();
      return;
    }
    const blocks = this.#blockCount();
    let drop = 0;
    while (drop < blocks - 1 && start - this.#first >= (drop + 1) * BLOCK_SAMPLES) drop++;
    if (drop > 0) {
      this.#firstBlockAt = this.#blockAt(drop);
      this.#first += drop * BLOCK_SAMPLES;
      const index = this.#blockIndex;
      this.#blockIndex = index === undefined || blocks - drop <= WALKED_BLOCKS ? undefined : index.slice(drop);
    }
  }

  #restart(): void {
    this.start = 0;
    this.end = 0;
    this.#first = 0;
    this.#blockIndex = undefined;
    this.#used = this.#range === NO_RANGE ? 0 : this.#space.arena.offsetOf(this.#range);
    this.#newestTime = Number.NEGATIVE_INFINITY;
  }

  /** Gives the buffer's words back to the arena: the buffer is left empty, stale markers gone (see the header). */
  release(): void {
    this.#freeRange();
    this.#words = NO_WORDS;
    this.#range = NO_RANGE;
    this.#rangeEnd = 0;
    this.#restart();
    this.staleAt = undefined;
  }

  /** True when no sample is left (a stale marker alone says nothing a lookup could return). */
  isEmpty(): boolean {
    return this.end === this.start;
  }

  /**
   * Makes `extra` words free after the last block: moves the blocks to the front of the range when that frees
   * enough and the range stays at most three quarters full, moves them to a range of the next size up (or of one
   * that fits) otherwise.
   */
  #reserve(extra: number): void {
    if (this.#used + extra <= this.#rangeEnd) return;
    const from = this.#blockCount() === 0 ? this.#used : this.#firstBlockAt;
    const live = this.#used - from;
    const base = this.#range === NO_RANGE ? from : this.#space.arena.offsetOf(this.#range);
    const capacity = this.#rangeEnd - base;
    if (from === base || live + extra > capacity * 0.75) {
      this.#moveTo(Math.max(live + extra, capacity + 1), from, live);
    } else {
      this.#words.copyWithin(base, from, this.#used);
      this.#shiftBlocks(base - from);
      this.#used = base + live;
    }
  }

  /** Moves the `live` words at `from` to the front of a new range of at least `words` words; frees the old one. */
  #moveTo(words: number, from: number, live: number): void {
    const arena = this.#space.arena;
    const range = arena.allocate(words);
    const target = arena.slabOf(range);
    const base = arena.offsetOf(range);
    target.set(this.#words.subarray(from, from + live), base);
    this.#freeRange();
    this.#words = target;
    this.#range = range;
    this.#rangeEnd = base + rangeWords(words);
    this.#shiftBlocks(base - from);
    this.#used = base + live;
  }

  #freeRange(): void {
    if (this.#range !== NO_RANGE) this.#space.arena.free(this.#range, this.#capacity());
  }

  /** Words in the buffer's range (0 without one). */
  #capacity(): number {
    return this.#range === NO_RANGE ? 0 : this.#rangeEnd - this.#space.arena.offsetOf(this.#range);
  }

  /** Moves every block offset by `delta` words. */
  #shiftBlocks(delta: number): void {
    this.#firstBlockAt += delta;
    this.#lastBlockAt += delta;
    const index = this.#blockIndex;
    if (index !== undefined) for (let b = 0; b < index.length; b++) index[b] = (index[b] as number) + delta;
  }

  /** Offsets of the first `blocks` blocks, walking their headers from the first. */
  #walkBlocks(blocks: number): number[] {
    const offsets = [this.#firstBlockAt];
    for (let b = 1; b < blocks; b++) {
      const before = offsets[b - 1] as number;
      offsets.push(before + blockSize(this.#words, before));
    }
    return offsets;
  }

  /** Number of the first sample with time >= `time`. */
  lowerBound(time: number): number {
    let lo = this.start;
    let hi = this.end;
    if (lo === hi || this.time(lo) >= time) return lo;
    if (this.#newestTime < time) return hi;
    // time(lo) < time <= time(hi - 1)
    lo++;
    hi--;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.time(mid) < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Number after the last sample with time <= `time`. */
  upperBound(time: number): number {
    let lo = this.start;
    let hi = this.end;
    // The common case first: a window that ends at or after the newest sample.
    if (lo === hi || this.#newestTime <= time) return hi;
    if (this.time(lo) > time) return lo;
    // time(lo) <= time < time(hi - 1)
    lo++;
    hi--;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.time(mid) <= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Newest stale marker at or before `time`, or -Infinity. */
  staleAtOrBefore(time: number): number {
    const s = this.staleAt;
    if (s === undefined) return Number.NEGATIVE_INFINITY;
    for (let k = s.length - 1; k >= 0; k--) {
      const x = s[k] as number;
      if (x <= time) return x;
    }
    return Number.NEGATIVE_INFINITY;
  }

  /** Bytes held by the packed samples (the buffer's range), the index of block offsets if any, and stale markers. */
  bytes(): number {
    return this.#capacity() * 4 + ((this.#blockIndex?.length ?? 0) + (this.staleAt?.length ?? 0)) * 8;
  }
}
