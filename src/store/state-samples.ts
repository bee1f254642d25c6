/**
 * The samples of one series in a state file (state-file.ts): n times, each as its difference to the previous
 * one (the first to 0), then n values, each XOR'd as 64 bits with the previous one (the first as it is); float64
 * little-endian, `BYTES_PER_SAMPLE` bytes a sample. Both transforms make the bytes compress well.
 *
 * Contract:
 * - `encodeSamples(t, v)` gives a series' bytes.
 * - `readSamples(content, n, window, what)` reads them back piece by piece and keeps what the history would keep:
 *   the newest `window.maxSamples` of those not older than `window.oldestMs`; it holds no more than that at any
 *   time, whatever `n`. A time that is not a whole number of milliseconds, or not after the previous one, is
 *   `damaged`; one after `window.newestMs` is `limits`; content that ends first is `damaged`. `what` names the
 *   series in those messages.
 */
import { endianness } from 'node:os';
import type { StateContent } from './state-content.js';
import { StateFileError } from './state-file-error.js';
import { BYTES_PER_SAMPLE } from './state-file-limits.js';

export { BYTES_PER_SAMPLE };

export type SampleWindow = {
  /** Older samples are dropped (the history's retention at restore). */
  readonly oldestMs: number;
  /** A later sample refuses the file (the clock at restore plus the allowed skew). */
  readonly newestMs: number;
  /** The newest this many are kept (the history's `maxSamplesPerSeries`). */
  readonly maxSamples: number;
};

const BIG_ENDIAN = endianness() === 'BE';
const BYTES_PER_WORD = 8;
/** Bytes taken from the content at a time: a multiple of 8. */
const PIECE_BYTES = 64 * 1024;

export function encodeSamples(t: Float64Array, v: Float64Array): Buffer {
  const n = t.length;
  const out = new Float64Array(2 * n);
  let previous = 0;
  for (let i = 0; i < n; i++) {
    const time = t[i] as number;
    out[i] = time - previous;
    previous = time;
  }
  out.set(v, n);
  const words = new Uint32Array(out.buffer, n * 8, 2 * n);
  for (let k = 2 * n - 1; k >= 2; k--) words[k] = (words[k] as number) ^ (words[k - 2] as number);
  const bytes = Buffer.from(out.buffer);
  if (BIG_ENDIAN) bytes.swap64();
  return bytes;
}

export async function readSamples(
  content: StateContent,
  n: number,
  window: SampleWindow,
  what: string,
): Promise<{ t: Float64Array; v: Float64Array }> {
  const held = Math.min(n, window.maxSamples);
  // The newest `held` times, in a ring; which of them are kept is known once every time has been read.
  const ring = new Float64Array(held);
  let firstRecent = n;
  let previous = 0;
  let i = 0;
  await eachWord(content, n, what, (piece, offset) => {
    const time = previous + piece.readDoubleLE(offset);
    if (!Number.isInteger(time)) {
      throw new StateFileError('damaged', `a time of ${what} is not a whole number of milliseconds`);
    }
    if (i > 0 && time <= previous) throw new StateFileError('damaged', `the times of ${what} are not ascending`);
    if (time > window.newestMs) {
      const latest = new Date(window.newestMs).toISOString();
      throw new StateFileError('limits', `${what} has a sample in the future: at ${time} ms, after ${latest}`);
    }
    if (firstRecent === n && time >= window.oldestMs) firstRecent = i;
    ring[i % held] = time;
    previous = time;
    i++;
  });

  const from = Math.max(n - held, firstRecent);
  const t = new Float64Array(n - from);
  for (let k = 0; k < t.length; k++) t[k] = ring[(from + k) % held] as number;
  const v = new Float64Array(n - from);
  const value = new DataView(new ArrayBuffer(BYTES_PER_WORD));
  let low = 0;
  let high = 0;
  i = 0;
  await eachWord(content, n, what, (piece, offset) => {
    low ^= piece.readInt32LE(offset);
    high ^= piece.readInt32LE(offset + 4);
    if (i >= from) {
      value.setInt32(0, low, true);
      value.setInt32(4, high, true);
      v[i - from] = value.getFloat64(0, true);
    }
    i++;
  });
  return { t, v };
}

/** Calls `each` on `n` consecutive 8-byte words of the content, read a piece at a time. */
async function eachWord(
  content: StateContent,
  n: number,
  what: string,
  each: (piece: Buffer, offset: number) => void,
): Promise<void> {
  let left = n * BYTES_PER_WORD;
  while (left > 0) {
    const piece = await content.bytes(Math.min(left, PIECE_BYTES));
    if (piece === undefined) throw new StateFileError('damaged', `truncated in ${what}`);
    for (let offset = 0; offset < piece.length; offset += BYTES_PER_WORD) each(piece, offset);
    left -= piece.length;
  }
}
