/**
 * The scraped history as a file, so that a restarted service continues it (`serve --state-dir`).
 *
 * Contract:
 * - `encodeHistoryState(history, writtenAtMs)` gives the file's bytes, gzip of:
 *     `workqueue-doctor-history 1`: the format and its version, one line;
 *     `{"writtenAt":ISO time,"retentionMs":N,"targets":[{"labels":{...}},...]}`: one line;
 *     per series, `{"target":index,"key":K,"labels":{...},"samples":n}` on one line, then n times (the first in
 *     unix milliseconds, each next as its difference to the previous) and n values (each XOR'd, as 64 bits,
 *     with the previous one), float64 little-endian;
 *     `{"end":true,"series":count}`: one line.
 *   Every sample held, with each series' key as scraped and its final labels; stale markers are not kept. The
 *   file holds labels and samples only: no target URL (nor the credentials one may carry), no token.
 * - Encoding runs in slices (one metric of one target at a time, yielding to the event loop between them)
 *   and compresses on libuv's thread pool, so a server on the same event loop keeps answering; a scrape landing
 *   between two slices is in the later series only.
 * - `restoreHistoryState(bytes, history, nowMs)` checks the whole file before it touches the history, then
 *   puts every series back under its target (`History.restoreSeries`) and drops the samples older than the
 *   history's retention at `nowMs`. A file that is not one of these, is of another version, or is damaged
 *   (bad gzip data, truncated, malformed) is a `StateFileError` saying which; the history is then untouched.
 * - A restored target's id in the history is its label set (`{instance="...",job="..."}`); the scrape
 *   source continues the target whose labels a current target has (scrape-source.ts).
 */
import { endianness } from 'node:os';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { constants, createGzip, gunzip } from 'node:zlib';
import { type Labels, seriesKey } from '../exposition/labels.js';
import { EventLoopSlicer } from '../util/event-loop-slicer.js';
import type { History, ScrapeTarget } from './history.js';

export const STATE_FORMAT = 'workqueue-doctor-history';
export const STATE_VERSION = 1;
/** The largest decompressed state read: far beyond any history a service holds, short of exhausting memory. */
export const STATE_MAX_BYTES = 1024 * 1024 * 1024;

/** Why a state file was not read: not such a file, another version of the format, or damaged. */
export type StateFileProblem = 'foreign' | 'version' | 'damaged';

export class StateFileError extends Error {
  override readonly name = 'StateFileError';
  readonly problem: StateFileProblem;
  constructor(problem: StateFileProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

export type RestoredHistory = {
  readonly writtenAtMs: number;
  readonly targets: number;
  readonly series: number;
  /** Samples put back and still within the retention at `nowMs`. */
  readonly samples: number;
};

const BIG_ENDIAN = endianness() === 'BE';
const GZIP_MAGIC = [0x1f, 0x8b] as const;
const NEWLINE = 0x0a;
const BYTES_PER_SAMPLE = 16;
const gunzipAsync = promisify(gunzip);

/** The history as the bytes of a state file (see the module contract). */
export async function encodeHistoryState(history: History, writtenAtMs: number): Promise<Buffer> {
  const compressed: Buffer[] = [];
  await pipeline(
    Readable.from(stateChunks(history, writtenAtMs)),
    createGzip({ level: constants.Z_BEST_SPEED }),
    async (chunks: AsyncIterable<Buffer>) => {
      for await (const chunk of chunks) compressed.push(chunk);
    },
  );
  return Buffer.concat(compressed);
}

async function* stateChunks(history: History, writtenAtMs: number): AsyncGenerator<Buffer> {
  const targets = history.targets();
  const header = {
    writtenAt: new Date(writtenAtMs).toISOString(),
    retentionMs: Number.isFinite(history.retentionMs) ? history.retentionMs : null,
    targets: targets.map((t) => ({ labels: t.labels })),
  };
  yield Buffer.from(`${STATE_FORMAT} ${STATE_VERSION}\n${JSON.stringify(header)}\n`);
  const slicer = new EventLoopSlicer();
  let count = 0;
  for (const [index, target] of targets.entries()) {
    for (const metric of history.metricNames(target.id)) {
      await slicer.pause();
      // Views into the history: encoded (copied) before the next pause.
      const parts: Buffer[] = [];
      for (const series of history.heldSeries(target.id, metric)) {
        const samples = series.t.length;
        if (samples === 0) continue;
        const record = { target: index, key: series.key, labels: series.labels, samples };
        parts.push(Buffer.from(`${JSON.stringify(record)}\n`), encodeSamples(series.t, series.v));
        count++;
      }
      if (parts.length > 0) yield Buffer.concat(parts);
    }
  }
  yield Buffer.from(`${JSON.stringify({ end: true, series: count })}\n`);
}

/** Times as differences, values XOR'd with their predecessor (both compress well), float64 little-endian. */
function encodeSamples(t: Float64Array, v: Float64Array): Buffer {
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

function decodeSamples(data: Buffer, offset: number, n: number): { t: Float64Array; v: Float64Array } {
  const out = new Float64Array(2 * n);
  new Uint8Array(out.buffer).set(data.subarray(offset, offset + BYTES_PER_SAMPLE * n));
  if (BIG_ENDIAN) Buffer.from(out.buffer).swap64();
  const words = new Uint32Array(out.buffer, n * 8, 2 * n);
  for (let k = 2; k < 2 * n; k++) words[k] = (words[k] as number) ^ (words[k - 2] as number);
  let previous = 0;
  for (let i = 0; i < n; i++) {
    previous += out[i] as number;
    out[i] = previous;
  }
  return { t: out.subarray(0, n), v: out.subarray(n) };
}

type SeriesRecord = {
  readonly target: number;
  readonly key: string;
  readonly labels: Labels;
  readonly t: Float64Array;
  readonly v: Float64Array;
};

/** Reads a state file's bytes into `history` (see the module contract). */
export async function restoreHistoryState(
  bytes: Uint8Array,
  history: History,
  nowMs: number,
): Promise<RestoredHistory> {
  const data = await decompress(bytes);
  const { writtenAtMs, targets, series } = parseState(data);
  const before = history.stats().samples;
  const ids: ScrapeTarget[] = targets.map((labels) => ({ id: seriesKey('', labels), labels }));
  for (const s of series) history.restoreSeries(ids[s.target] as ScrapeTarget, s, s.t, s.v);
  history.prune(nowMs);
  return {
    writtenAtMs,
    targets: new Set(ids.map((t) => t.id)).size,
    series: series.length,
    samples: history.stats().samples - before,
  };
}

async function decompress(bytes: Uint8Array): Promise<Buffer> {
  if (bytes.length === 0) throw new StateFileError('damaged', 'the file is empty');
  if (bytes[0] !== GZIP_MAGIC[0] || bytes[1] !== GZIP_MAGIC[1]) {
    throw new StateFileError('foreign', `not a ${STATE_FORMAT} file (not gzip-compressed)`);
  }
  try {
    return await gunzipAsync(bytes, { maxOutputLength: STATE_MAX_BYTES });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR') throw new StateFileError('damaged', 'truncated (the gzip data ends early)');
    if (code === 'ERR_BUFFER_TOO_LARGE') {
      throw new StateFileError('damaged', `larger than ${STATE_MAX_BYTES} bytes decompressed`);
    }
    throw new StateFileError('damaged', `bad gzip data: ${(error as Error).message}`);
  }
}

/** Checks and decodes the whole file; throws a `StateFileError` at the first problem. */
function parseState(data: Buffer): { writtenAtMs: number; targets: Labels[]; series: SeriesRecord[] } {
  let offset = 0;
  const nextLine = (): string | undefined => {
    const end = data.indexOf(NEWLINE, offset);
    if (end === -1) return undefined;
    const line = data.toString('utf8', offset, end);
    offset = end + 1;
    return line;
  };
  const damaged = (what: string): StateFileError => new StateFileError('damaged', what);

  const prefix = `${STATE_FORMAT} `;
  if (data.toString('latin1', 0, prefix.length) !== prefix) {
    throw new StateFileError('foreign', `not a ${STATE_FORMAT} file`);
  }
  const first = nextLine();
  if (first === undefined) throw damaged('truncated in the first line');
  const version = first.slice(prefix.length);
  if (version !== String(STATE_VERSION)) {
    throw new StateFileError(
      'version',
      `format version ${JSON.stringify(version.slice(0, 20))}; this version of workqueue-doctor reads version ${STATE_VERSION}`,
    );
  }

  const header = parseLine(nextLine(), 'header');
  const writtenAtMs = typeof header['writtenAt'] === 'string' ? Date.parse(header['writtenAt']) : Number.NaN;
  const targetList = header['targets'];
  if (!Number.isFinite(writtenAtMs) || !Array.isArray(targetList)) throw damaged('malformed header');
  const targets = targetList.map((t: unknown, i) => {
    const labels = isRecord(t) ? t['labels'] : undefined;
    if (!isLabels(labels)) throw damaged(`malformed labels of target ${i}`);
    return labels;
  });

  const series: SeriesRecord[] = [];
  for (;;) {
    const record = parseLine(nextLine(), `series ${series.length}`);
    if (record['end'] === true) {
      if (record['series'] !== series.length)
        throw damaged(`${series.length} series where the end says ${record['series']}`);
      if (offset !== data.length) throw damaged('data after the end');
      return { writtenAtMs, targets, series };
    }
    const { target, key, labels, samples } = record;
    if (
      !(Number.isInteger(target) && (target as number) >= 0 && (target as number) < targets.length) ||
      typeof key !== 'string' ||
      key === '' ||
      !isLabels(labels) ||
      !(Number.isInteger(samples) && (samples as number) > 0)
    ) {
      throw damaged(`malformed record of series ${series.length}`);
    }
    const n = samples as number;
    if (offset + BYTES_PER_SAMPLE * n > data.length) throw damaged(`truncated in series ${series.length}`);
    const { t, v } = decodeSamples(data, offset, n);
    offset += BYTES_PER_SAMPLE * n;
    if (!t.every(Number.isFinite)) throw damaged(`a time of series ${series.length} is not a number`);
    series.push({ target: target as number, key, labels, t, v });
  }
}

function parseLine(line: string | undefined, what: string): Record<string, unknown> {
  if (line === undefined) throw new StateFileError('damaged', `truncated before the ${what}`);
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new StateFileError('damaged', `malformed ${what}`);
  }
  if (!isRecord(value)) throw new StateFileError('damaged', `malformed ${what}`);
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLabels(value: unknown): value is Labels {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}
