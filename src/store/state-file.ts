/**
 * The scraped history as a file, so that a restarted service continues it (`serve --state-dir`).
 *
 * Contract:
 * - `encodeHistoryState(history, writtenAtMs)` gives the file's bytes, gzip of:
 *     `workqueue-doctor-history 1`: the format and its version, one line;
 *     `{"writtenAt":ISO time,"retentionMs":N,"targets":[{"labels":{...}},...]}`: one line;
 *     per series, `{"target":index,"key":K,"labels":{...},"samples":n}` on one line, then its n samples
 *     (state-samples.ts);
 *     `{"end":true,"series":count}`: one line.
 *   Every sample held, with each series' key as scraped and its final labels; stale markers are not kept. The
 *   file holds labels and samples only: no target URL (nor the credentials one may carry), no token.
 * - Encoding runs in slices (one metric of one target at a time, yielding to the event loop between them)
 *   and compresses on libuv's thread pool, so a server on the same event loop keeps answering; a scrape landing
 *   between two slices is in the later series only.
 * - `restoreHistoryState(compressed, history, { nowMs, limits, signal })` reads the file as it is decompressed
 *   (on the thread pool, never holding its content whole; state-content.ts) and checks all of it before it
 *   touches the history: its size compressed and decompressed, every line's length, the series of each target
 *   and of all, every label (state-records.ts), every sample time (state-samples.ts), against `limits`
 *   (state-file-limits.ts: what the scrapes of the service could bring). Of each series it keeps what the
 *   history would: the newest `history.maxSamplesPerSeries` within the history's retention at `nowMs`; a sample
 *   later than `nowMs` plus the allowed skew refuses the file. It then puts every series back under its target
 *   (`History.restoreSeries`). A file that is not one of these, is of another version, is damaged (bad gzip
 *   data, truncated, malformed) or beyond a limit is a `StateFileError` saying which (state-file-error.ts); the
 *   history is then untouched. Aborting `signal` ends the restore at its next read, the history untouched.
 * - A restored target's id in the history is its label set (`{instance="...",job="..."}`); the scrape
 *   source continues the target whose labels a current target has (scrape-source.ts).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createGzip } from 'node:zlib';
import { type Labels, seriesKey } from '../exposition/labels.js';
import { EventLoopSlicer } from '../util/event-loop-slicer.js';
import type { History, ScrapeTarget } from './history.js';
import { type CompressedState, openStateContent, type StateContent } from './state-content.js';
import { StateFileError, type StateFileProblem } from './state-file-error.js';
import type { StateFileLimits } from './state-file-limits.js';
import { isRecord, type SeriesHead, seriesHeadOf, targetsOf } from './state-records.js';
import { encodeSamples, readSamples, type SampleWindow } from './state-samples.js';

export { type CompressedState, StateFileError, type StateFileProblem };

export const STATE_FORMAT = 'workqueue-doctor-history';
export const STATE_VERSION = 1;

export type RestoredHistory = {
  readonly writtenAtMs: number;
  readonly targets: number;
  /** Series put back: those with samples within the retention at `nowMs`. */
  readonly series: number;
  /** Samples put back. */
  readonly samples: number;
};

export type RestoreOptions = {
  /** The clock at restore: the retention's end, and where the future begins. */
  readonly nowMs: number;
  readonly limits: StateFileLimits;
  readonly signal?: AbortSignal | undefined;
};

/** The first line's version, at most this long. */
const VERSION_BYTES = 32;

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

/** Reads a state file into `history` (see the module contract). */
export async function restoreHistoryState(
  compressed: CompressedState,
  history: History,
  options: RestoreOptions,
): Promise<RestoredHistory> {
  const content = openStateContent(compressed, options.limits, options.signal);
  let state: CheckedState;
  try {
    state = await readState(content, history, options);
  } finally {
    content.close();
  }
  const before = history.stats().samples;
  const ids: ScrapeTarget[] = state.targets.map((labels) => ({ id: seriesKey('', labels), labels }));
  for (const s of state.series) history.restoreSeries(ids[s.target] as ScrapeTarget, s, s.t, s.v);
  history.prune(options.nowMs);
  return {
    writtenAtMs: state.writtenAtMs,
    targets: new Set(ids.map((t) => t.id)).size,
    series: state.series.length,
    samples: history.stats().samples - before,
  };
}

type RestoredSeries = SeriesHead & { readonly t: Float64Array; readonly v: Float64Array };
type CheckedState = { writtenAtMs: number; targets: Labels[]; series: RestoredSeries[] };

/** Checks and decodes the whole content; throws a `StateFileError` at the first problem. */
async function readState(content: StateContent, history: History, options: RestoreOptions): Promise<CheckedState> {
  const { limits, nowMs } = options;
  const damaged = (what: string): StateFileError => new StateFileError('damaged', what);
  const overLimit = (what: string): StateFileError => new StateFileError('limits', what);

  const prefix = `${STATE_FORMAT} `;
  if ((await content.bytes(prefix.length))?.toString('latin1') !== prefix) {
    throw new StateFileError('foreign', `not a ${STATE_FORMAT} file`);
  }
  const version = (await content.line(VERSION_BYTES, 'first line'))?.toString('latin1');
  if (version === undefined) throw damaged('truncated in the first line');
  if (version !== String(STATE_VERSION)) {
    throw new StateFileError(
      'version',
      `format version ${JSON.stringify(version.slice(0, 20))}; this version of workqueue-doctor reads version ${STATE_VERSION}`,
    );
  }

  const header = parseLine(await content.line(limits.maxLineBytes, 'header'), 'header');
  const writtenAtMs = typeof header['writtenAt'] === 'string' ? Date.parse(header['writtenAt']) : Number.NaN;
  if (!Number.isFinite(writtenAtMs)) throw damaged('malformed header');
  const targets = targetsOf(header);

  const window: SampleWindow = {
    oldestMs: nowMs - history.retentionMs,
    newestMs: nowMs + limits.futureSkewMs,
    maxSamples: history.maxSamplesPerSeries,
  };
  const seriesOfTarget = new Array<number>(targets.length).fill(0);
  const series: RestoredSeries[] = [];
  const slicer = new EventLoopSlicer({ signal: options.signal });
  for (let index = 0; ; index++) {
    await slicer.pause();
    const what = `series ${index}`;
    const record = parseLine(await content.line(limits.maxLineBytes, `record of ${what}`), what);
    if (record['end'] === true) {
      if (record['series'] !== index) throw damaged(`${index} series where the end says ${record['series']}`);
      if (!(await content.atEnd())) throw damaged('data after the end');
      return { writtenAtMs, targets, series };
    }
    const head = seriesHeadOf(record, index, targets, limits);
    const count = (seriesOfTarget[head.target] as number) + 1;
    if (count > limits.maxSeriesPerTarget) {
      const target = seriesKey('', targets[head.target] as Labels);
      throw overLimit(`more than ${limits.maxSeriesPerTarget} series of the target ${target} (scrape.heldSeriesLimit)`);
    }
    if (index >= limits.maxSeries) {
      throw overLimit(
        `more than ${limits.maxSeries} series (scrape.heldSeriesLimit for each target it may hold, or scrape.totalSeriesLimit)`,
      );
    }
    seriesOfTarget[head.target] = count;
    const { t, v } = await readSamples(content, head.samples, window, what);
    if (t.length > 0) series.push({ ...head, t, v });
  }
}

function parseLine(line: Buffer | undefined, what: string): Record<string, unknown> {
  if (line === undefined) throw new StateFileError('damaged', `truncated before the ${what}`);
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch {
    throw new StateFileError('damaged', `malformed ${what}`);
  }
  if (!isRecord(value)) throw new StateFileError('damaged', `malformed ${what}`);
  return value;
}
