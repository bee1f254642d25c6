/**
 * Samples packed in blocks of up to `BLOCK_SAMPLES`, in one `Uint32Array` per series: the encoding of the
 * history (series-buffer.ts).
 *
 * A block is a header of `HEADER_WORDS` words followed by its packed times, then its packed values. Each of the
 * two fields is either packed or raw:
 * - packed, when every number of the field in the block is an integer of magnitude at most 2^52 (times in
 *   milliseconds; counters, bucket counts, depths): `x[i] = base + i * step + d[i]`, `d[i] ≥ 0` in `width` bits,
 *   where `step` is the field's slope over the block (0, the first interval or the mean one: whichever gives the
 *   narrowest `d`). A scrape every 15 s with a few milliseconds of jitter takes 3 to 5 bits per time; exactly
 *   regular scrapes and counters that do not move take none; a counter that grows steadily takes the bits of its
 *   wobble, not of its size;
 * - raw 64-bit floats (`RAW`) otherwise: fractions, NaN, ±Inf, -0, or a spread wider than 32 bits.
 * Each block keeps its own fields, so a burst widens only its own block. Any sample is read in O(1) (its block is
 * `index / BLOCK_SAMPLES`, its bits at `index * width`); only the last block takes appends, in place while the
 * sample fits its fields, by repacking that block alone (at most `BLOCK_SAMPLES` samples) otherwise.
 *
 * Contract: every function here takes the word array and the word offset `h` of a block's header; the caller
 * owns the layout of blocks in the array and makes sure that the words `planAppend` asks for are there before
 * `appendPlanned`.
 */

export const BLOCK_SAMPLES = 64;
/** Count and widths; the times' base (2 words) and step; the values' base (2 words) and step. */
const HEADER_WORDS = 7;
/** A field width meaning "raw 64-bit floats". */
export const RAW = 64;

const TIMES = 0;
const VALUES = 1;
type Field = typeof TIMES | typeof VALUES;
/** Header offsets of a field's base (a float in two words) and step (an int32). */
const BASE = [1, 4] as const;
const STEP = [3, 6] as const;

/** Largest magnitude a packed number may have: bases, steps and offsets then add up exactly. */
const PACKABLE_MAX = 2 ** 52;
const INT32_MAX = 2 ** 31 - 1;
const UINT32_MAX = 2 ** 32 - 1;

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);

function readFloat(words: Uint32Array, at: number): number {
  u32[0] = words[at] as number;
  u32[1] = words[at + 1] as number;
  return f64[0] as number;
}

function writeFloat(words: Uint32Array, at: number, value: number): void {
  f64[0] = value;
  words[at] = u32[0] as number;
  words[at + 1] = u32[1] as number;
}

/** Bits needed for an unsigned integer up to `span` (< 2^32; 0 for 0). */
function bitsFor(span: number): number {
  return span === 0 ? 0 : 32 - Math.clz32(span);
}

function isPackable(x: number): boolean {
  return Number.isInteger(x) && Math.abs(x) <= PACKABLE_MAX && !Object.is(x, -0);
}

/** Words that a field of `n` samples takes at `width`. */
function fieldWords(n: number, width: number): number {
  return width === RAW ? 2 * n : Math.ceil((n * width) / 32);
}

/** Words a block of `n` samples takes, header included. */
export function blockWords(n: number, tWidth: number, vWidth: number): number {
  return HEADER_WORDS + fieldWords(n, tWidth) + fieldWords(n, vWidth);
}

export function blockCount(words: Uint32Array, h: number): number {
  return (words[h] as number) & 0x7f;
}

function widthOf(words: Uint32Array, h: number, field: Field): number {
  return ((words[h] as number) >>> (7 + 7 * field)) & 0x7f;
}

function setCountAndWidths(words: Uint32Array, h: number, n: number, tWidth: number, vWidth: number): void {
  words[h] = n | (tWidth << 7) | (vWidth << 14);
}

export function blockSize(words: Uint32Array, h: number): number {
  return blockWords(blockCount(words, h), widthOf(words, h, TIMES), widthOf(words, h, VALUES));
}

/** Word offset of a field's packed numbers. */
function fieldAt(words: Uint32Array, h: number, field: Field): number {
  const timesAt = h + HEADER_WORDS;
  return field === TIMES ? timesAt : timesAt + fieldWords(blockCount(words, h), widthOf(words, h, TIMES));
}

/** Reads entry `i` of `width` bits (1 to 32) packed from word `at`. */
function readPacked(words: Uint32Array, at: number, width: number, i: number): number {
  const bit = i * width;
  const w = at + (bit >>> 5);
  const shift = bit & 31;
  let x = (words[w] as number) >>> shift;
  if (shift + width > 32) x = (x | ((words[w + 1] as number) << (32 - shift))) >>> 0;
  return width === 32 ? x : x & (((1 << width) >>> 0) - 1);
}

/** Writes `x` (< 2^width) as entry `i` of `width` bits (1 to 32) packed from word `at`. */
function writePacked(words: Uint32Array, at: number, width: number, i: number, x: number): void {
  const bit = i * width;
  const w = at + (bit >>> 5);
  const shift = bit & 31;
  const mask = width === 32 ? UINT32_MAX : ((1 << width) >>> 0) - 1;
  words[w] = ((words[w] as number) & ~(mask << shift)) | (x << shift);
  if (shift + width > 32) {
    const highMask = ((1 << (shift + width - 32)) >>> 0) - 1;
    words[w + 1] = ((words[w + 1] as number) & ~highMask) | (x >>> (32 - shift));
  }
}

/** Entry `i` of a field of the block at `h`. */
function entry(words: Uint32Array, h: number, field: Field, i: number): number {
  const width = widthOf(words, h, field);
  const at = fieldAt(words, h, field);
  if (width === RAW) return readFloat(words, at + 2 * i);
  const line = readFloat(words, h + BASE[field]) + i * ((words[h + STEP[field]] as number) | 0);
  return width === 0 ? line : line + readPacked(words, at, width, i);
}

/** Time of sample `i` of the block at `h`. */
export function blockTime(words: Uint32Array, h: number, i: number): number {
  return entry(words, h, TIMES, i);
}

/** Value of sample `i` of the block at `h`. */
export function blockValue(words: Uint32Array, h: number, i: number): number {
  return entry(words, h, VALUES, i);
}

function readField(
  words: Uint32Array,
  h: number,
  field: Field,
  from: number,
  to: number,
  out: Float64Array,
  o: number,
) {
  const width = widthOf(words, h, field);
  const at = fieldAt(words, h, field);
  if (width === RAW) {
    for (let i = from, k = o; i < to; i++, k++) out[k] = readFloat(words, at + 2 * i);
    return;
  }
  const base = readFloat(words, h + BASE[field]);
  const step = (words[h + STEP[field]] as number) | 0;
  if (width === 0) {
    for (let i = from, k = o; i < to; i++, k++) out[k] = base + i * step;
    return;
  }
  // A running bit cursor: one or two word reads per entry.
  const mask = width === 32 ? UINT32_MAX : ((1 << width) >>> 0) - 1;
  let bit = from * width;
  let line = base + from * step;
  for (let k = o, end = o + to - from; k < end; k++) {
    const w = at + (bit >>> 5);
    const shift = bit & 31;
    let x = (words[w] as number) >>> shift;
    if (shift + width > 32) x = (x | ((words[w + 1] as number) << (32 - shift))) >>> 0;
    out[k] = line + (width === 32 ? x : (x & mask) >>> 0);
    bit += width;
    line += step;
  }
}

/** Copies samples `[from, to)` of the block at `h` into `t` and `v` from index `o`. */
export function readBlock(
  words: Uint32Array,
  h: number,
  from: number,
  to: number,
  t: Float64Array,
  v: Float64Array,
  o: number,
): void {
  readField(words, h, TIMES, from, to, t, o);
  readField(words, h, VALUES, from, to, v, o);
}

/** A field's layout: RAW, or packed with `base`, `step` and `width`. */
type FieldLayout = { readonly width: number; readonly base: number; readonly step: number };
const RAW_FIELD: FieldLayout = { width: RAW, base: 0, step: 0 };

/** Starts a block of one sample at `h`; it takes `blockWords(1, …)` of its fields' widths, at most 11 words. */
export function startBlock(words: Uint32Array, h: number, time: number, value: number): void {
  const times = isPackable(time) ? { width: 0, base: time, step: 0 } : RAW_FIELD;
  const values = isPackable(value) ? { width: 0, base: value, step: 0 } : RAW_FIELD;
  writeLayout(words, h, 1, times, values);
  writeEntry(words, h, TIMES, times, 0, time);
  writeEntry(words, h, VALUES, values, 0, value);
}

function writeLayout(words: Uint32Array, h: number, n: number, times: FieldLayout, values: FieldLayout): void {
  setCountAndWidths(words, h, n, times.width, values.width);
  writeFloat(words, h + BASE[TIMES], times.base);
  words[h + STEP[TIMES]] = times.step;
  writeFloat(words, h + BASE[VALUES], values.base);
  words[h + STEP[VALUES]] = values.step;
}

function writeEntry(words: Uint32Array, h: number, field: Field, layout: FieldLayout, i: number, x: number): void {
  const at = fieldAt(words, h, field);
  if (layout.width === RAW) writeFloat(words, at + 2 * i, x);
  else if (layout.width > 0) writePacked(words, at, layout.width, i, x - layout.base - i * layout.step);
}

/** Writes `x` as entry `i` of a field as it is laid out (it fits: `fitsField`). */
function appendEntry(words: Uint32Array, h: number, field: Field, i: number, x: number): void {
  const width = widthOf(words, h, field);
  const at = fieldAt(words, h, field);
  if (width === RAW) writeFloat(words, at + 2 * i, x);
  else if (width > 0) {
    const line = readFloat(words, h + BASE[field]) + i * ((words[h + STEP[field]] as number) | 0);
    writePacked(words, at, width, i, x - line);
  }
}

/** Whether `x` fits as entry `n` of a field as it is laid out. */
function fitsField(words: Uint32Array, h: number, field: Field, n: number, x: number): boolean {
  const width = widthOf(words, h, field);
  if (width === RAW) return true;
  if (!isPackable(x)) return false;
  const d = x - readFloat(words, h + BASE[field]) - n * ((words[h + STEP[field]] as number) | 0);
  return d >= 0 && d < 2 ** width;
}

const scratch = [new Float64Array(BLOCK_SAMPLES), new Float64Array(BLOCK_SAMPLES)] as const;

/** The narrowest layout of `n` numbers: RAW, or packed around the best of three slopes. */
function layoutOf(xs: Float64Array, n: number): FieldLayout {
  for (let i = 0; i < n; i++) if (!isPackable(xs[i] as number)) return RAW_FIELD;
  const first = xs[0] as number;
  const candidates =
    n < 2 ? [0] : [0, (xs[1] as number) - first, Math.round(((xs[n - 1] as number) - first) / (n - 1))];
  let best = RAW_FIELD;
  for (const step of candidates) {
    if (!(Math.abs(step) <= INT32_MAX)) continue;
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      const r = (xs[i] as number) - i * step;
      if (r < lo) lo = r;
      if (r > hi) hi = r;
    }
    if (hi - lo > UINT32_MAX) continue;
    const spread = bitsFor(hi - lo);
    // A block still filling gets a bit to spare: a spread that grows with its samples widens half as often.
    const width = spread > 0 && spread < 32 && n < BLOCK_SAMPLES / 2 ? spread + 1 : spread;
    // The spread centred in what the width holds: room on both sides before the next repack.
    const room = width === 32 ? 0 : Math.floor((2 ** width - 1 - (hi - lo)) / 2);
    if (width < best.width) best = { width, base: lo - room, step };
  }
  return best;
}

/**
 * What the last `planAppend` decided: write in place, or repack the block to these layouts (its samples and the new
 * one already in the scratch arrays).
 */
const plan = { inPlace: false, times: RAW_FIELD, values: RAW_FIELD };

/**
 * Plans appending `(time, value)` to the open block at `h` (fewer than `BLOCK_SAMPLES` samples, time after its
 * last) and returns the words the block will take. `appendPlanned` carries the plan out; nothing may touch the
 * block in between.
 */
export function planAppend(words: Uint32Array, h: number, time: number, value: number): number {
  const n = blockCount(words, h);
  if (fitsAsIs(words, h, n, time, value)) {
    plan.inPlace = true;
    return blockWords(n + 1, widthOf(words, h, TIMES), widthOf(words, h, VALUES));
  }
  const { times, values } = layoutWith(words, h, n, time, value);
  plan.inPlace = false;
  plan.times = times;
  plan.values = values;
  return blockWords(n + 1, times.width, values.width);
}

/** Whether `(time, value)` fits the open block as laid out. */
function fitsAsIs(words: Uint32Array, h: number, n: number, time: number, value: number): boolean {
  return fitsField(words, h, TIMES, n, time) && fitsField(words, h, VALUES, n, value);
}

/** The block's samples and `(time, value)` in the scratch arrays, and their layout. */
function layoutWith(words: Uint32Array, h: number, n: number, time: number, value: number) {
  const [ts, vs] = scratch;
  readBlock(words, h, 0, n, ts, vs, 0);
  ts[n] = time;
  vs[n] = value;
  return { times: layoutOf(ts, n + 1), values: layoutOf(vs, n + 1) };
}

/**
 * Appends `(time, value)` to the open block at `h` as the `planAppend` just made for them decided: in place when
 * it fits the block's fields, repacking the block otherwise (the caller has made room for the words it returned).
 */
export function appendPlanned(words: Uint32Array, h: number, time: number, value: number): void {
  const n = blockCount(words, h);
  if (plan.inPlace) {
    const tWidth = widthOf(words, h, TIMES);
    const vWidth = widthOf(words, h, VALUES);
    const grown = fieldWords(n + 1, tWidth) - fieldWords(n, tWidth);
    if (grown > 0) {
      // The times take another word: the values move up by as much.
      const vAt = fieldAt(words, h, VALUES);
      words.copyWithin(vAt + grown, vAt, vAt + fieldWords(n, vWidth));
    }
    setCountAndWidths(words, h, n + 1, tWidth, vWidth);
    appendEntry(words, h, TIMES, n, time);
    appendEntry(words, h, VALUES, n, value);
    return;
  }
  const { times, values } = plan;
  writeLayout(words, h, n + 1, times, values);
  words.fill(0, h + HEADER_WORDS, h + blockWords(n + 1, times.width, values.width));
  const [ts, vs] = scratch;
  for (let i = 0; i <= n; i++) {
    writeEntry(words, h, TIMES, times, i, ts[i] as number);
    writeEntry(words, h, VALUES, values, i, vs[i] as number);
  }
}
