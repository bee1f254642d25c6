/**
 * A state file is read within the limits of what the service's scrapes could hold: a gzip bomb is refused once
 * its content passes the decompressed limit (not decompressed whole), and a tampered file with too many series,
 * too many or too long labels, a sample in the future or lines beyond any series' is refused, the history
 * untouched; of each series only what the history would keep is kept.
 */
import { constants, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCRAPE_SETTINGS } from '../../src/scrape/scrape-settings.js';
import { History } from '../../src/store/history.js';
import { restoreHistoryState, STATE_FORMAT, StateFileError } from '../../src/store/state-file.js';
import {
  MAX_TARGET_LABELS,
  STATE_FUTURE_SKEW_MS,
  type StateFileLimits,
  stateFileLimits,
  TARGET_LABEL_VALUE_LIMIT,
} from '../../src/store/state-file-limits.js';
import { gzipBombFile } from '../support/gzip-bomb.js';
import {
  BOMB_SAMPLES,
  depthSeries,
  type HandWrittenSeries,
  stateFileBomb,
  stateFileOf,
  stateFileStream,
} from '../support/state-files.js';

const NOW = 1_700_000_000_000;
const S = 1000;
const A = { job: 'static', instance: 'a:8080' };
const B = { job: 'static', instance: 'b:8080' };
const C = { job: 'static', instance: 'c:8080' };
/** A service scraping one target with a series limit of 10. */
const TEN_SERIES = stateFileLimits({ ...DEFAULT_SCRAPE_SETTINGS, heldSeriesLimit: 10 }, 1);
const RECENT = [NOW - 30 * S, NOW - 15 * S, NOW];

/** `bytes` in chunks of 64 KiB, counting those read. */
function countedChunks(bytes: Buffer): { chunks: AsyncIterable<Buffer>; bytes: () => number } {
  let read = 0;
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let at = 0; at < bytes.length; at += 64 * 1024) {
      const chunk = bytes.subarray(at, at + 64 * 1024);
      read += chunk.length;
      yield chunk;
    }
  }
  return { chunks: chunks(), bytes: () => read };
}

type Outcome = { readonly problem: string; readonly message: string; readonly samples: number };

/** How `bytes` is refused (with the history's samples afterwards), or a failed test when it is read. */
async function refusal(bytes: Uint8Array | AsyncIterable<Uint8Array>, limits: StateFileLimits): Promise<Outcome> {
  const history = new History();
  try {
    await restoreHistoryState(bytes, history, { nowMs: NOW, limits });
  } catch (error) {
    if (!(error instanceof StateFileError)) throw error;
    return { problem: error.problem, message: error.message, samples: history.stats().samples };
  }
  throw new Error('the file was read');
}

const file = (targets: Array<Record<string, string>>, series: Iterable<HandWrittenSeries>): Buffer =>
  stateFileOf({ writtenAtMs: NOW, targets, series });

describe('state file limits: size', () => {
  it('refuses a gzip bomb once its content passes the limit, without decompressing the rest', async () => {
    const limits = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1);
    // 640 MiB of valid series in about 830 KB: within the compressed limit, ten times the decompressed one.
    const bomb = stateFileBomb(40);
    expect(bomb.length).toBeLessThan(limits.maxFileBytes);
    expect(40 * BOMB_SAMPLES * 16).toBeGreaterThan(10 * limits.maxContentBytes);
    const read = countedChunks(bomb);
    const history = new History();
    const error = await restoreHistoryState(read.chunks, history, { nowMs: NOW, limits }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateFileError);
    const refused = error as StateFileError;
    expect(refused.problem).toBe('limits');
    expect(refused.message).toBe(`more than ${limits.maxContentBytes} bytes once decompressed`);
    // Read up to the limit and at most one chunk of gzip's output past it.
    expect(refused.contentBytesRead).toBeGreaterThan(limits.maxContentBytes);
    expect(refused.contentBytesRead).toBeLessThanOrEqual(limits.maxContentBytes + constants.Z_DEFAULT_CHUNK);
    expect(read.bytes()).toBeLessThan(bomb.length / 4);
    expect(history.stats().samples).toBe(0);
  });

  it('refuses a gzip bomb of zeros at its first bytes', async () => {
    const bomb = gzipBombFile(640);
    const read = countedChunks(bomb);
    const found = await refusal(read.chunks, stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1));
    expect(found).toEqual({ problem: 'foreign', message: `not a ${STATE_FORMAT} file`, samples: 0 });
    expect(read.bytes()).toBeLessThan(bomb.length / 4);
  });

  it('refuses a file larger than the compressed limit before decompressing it', async () => {
    const bytes = file([A], depthSeries(0, A, 3, RECENT));
    const limits = { ...TEN_SERIES, maxFileBytes: bytes.length - 1 };
    expect(await refusal(bytes, limits)).toEqual({
      problem: 'limits',
      message: `larger than ${bytes.length - 1} bytes`,
      samples: 0,
    });
  });

  it('sizes the limits from the scrape settings and the targets', () => {
    const one = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1);
    const three = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 3);
    expect(one.maxSeriesPerTarget).toBe(DEFAULT_SCRAPE_SETTINGS.heldSeriesLimit);
    expect(three.maxSeries).toBe(3 * DEFAULT_SCRAPE_SETTINGS.heldSeriesLimit);
    // 20,000 series of 121 samples: tens of MiB, not the 1 GiB a bomb could once reach.
    expect(one.maxContentBytes).toBeGreaterThan(20_000 * 121 * 16);
    expect(one.maxContentBytes).toBeLessThan(128 * 2 ** 20);
    expect(three.maxContentBytes).toBeGreaterThan(2.9 * one.maxContentBytes);
  });
});

describe('state file limits: series and labels', () => {
  it('refuses more series of one target than the held series limit', async () => {
    expect(await refusal(file([A], depthSeries(0, A, 11, RECENT)), TEN_SERIES)).toEqual({
      problem: 'limits',
      message: 'more than 10 series of the target {instance="a:8080",job="static"} (scrape.heldSeriesLimit)',
      samples: 0,
    });
  });

  it('refuses more series in all than the held series limit of every target it may hold', async () => {
    const series = [...depthSeries(0, A, 7, RECENT), ...depthSeries(1, B, 7, RECENT), ...depthSeries(2, C, 7, RECENT)];
    const limits = stateFileLimits({ ...DEFAULT_SCRAPE_SETTINGS, heldSeriesLimit: 10 }, 2);
    const found = await refusal(file([A, B, C], series), limits);
    expect(found.problem).toBe('limits');
    expect(found.message).toMatch(/^more than 20 series/);
  });

  it('refuses a tampered file of 500,000 series at the first one past the limit, reading no further', async () => {
    const limits = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1);
    let written = 0;
    function* series(): Generator<HandWrittenSeries> {
      for (const s of depthSeries(0, A, 500_000, [NOW])) {
        written++;
        yield s;
      }
    }
    const found = await refusal(stateFileStream({ writtenAtMs: NOW, targets: [A], series: series() }), limits);
    expect(found).toEqual({
      problem: 'limits',
      message: 'more than 20000 series of the target {instance="a:8080",job="static"} (scrape.heldSeriesLimit)',
      samples: 0,
    });
    // The file is made as it is read: what was made is what was read, about the held series limit.
    expect(written).toBeLessThan(40_000);
  });

  it('refuses labels beyond the label limits, the target labels apart', async () => {
    const labels = (extra: Record<string, string>): HandWrittenSeries => ({
      target: 0,
      key: 'workqueue_depth{name="q"}',
      labels: { ...A, name: 'q', ...extra },
      t: RECENT,
    });
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`l${i}`, 'x']));
    const cases: Array<[HandWrittenSeries, Record<string, string>, RegExp]> = [
      // The target's two labels and 30 of its own: one over the default label limit of 30.
      [labels(many), A, /^series 0 has more than 30 labels besides its target's \(scrape\.labelLimit\)$/],
      [
        labels({ name: 'q'.repeat(1025) }),
        A,
        /^the name label of series 0 is longer than 1024 characters \(scrape\.labelValueLimit\)$/,
      ],
      [
        labels({}),
        { ...A, ...Object.fromEntries(Array.from({ length: MAX_TARGET_LABELS - 1 }, (_, i) => [`t${i}`, 'x'])) },
        new RegExp(`^target 0 has more than ${MAX_TARGET_LABELS} labels$`),
      ],
      [
        labels({}),
        { ...A, instance: 'h'.repeat(TARGET_LABEL_VALUE_LIMIT + 1) },
        /^the instance label of target 0 is longer than 512 characters/,
      ],
    ];
    for (const [series, target, message] of cases) {
      const found = await refusal(file([target], [series]), stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1));
      expect(found.problem).toBe('limits');
      expect(found.message).toMatch(message);
      expect(found.samples).toBe(0);
    }
  });

  it('refuses labels longer together than the label-set length limit, as a scrape does', async () => {
    const limits = stateFileLimits({ ...DEFAULT_SCRAPE_SETTINGS, labelSetLengthLimit: 64 }, 1);
    const series = (value: string): HandWrittenSeries => ({
      target: 0,
      key: 'workqueue_depth{name="q"}',
      labels: { ...A, name: 'q', controller: value },
      t: RECENT,
    });
    // name=q (5) and controller=… (10 + 49 = 59): 64 characters, at the limit; one more is over it.
    expect((await refusal(file([A], [series('c'.repeat(50))]), limits)).message).toBe(
      'the labels of series 0 are longer than 64 characters together (scrape.labelSetLengthLimit)',
    );
    const history = new History();
    await restoreHistoryState(file([A], [series('c'.repeat(49))]), history, { nowMs: NOW, limits });
    expect(history.stats().samples).toBeGreaterThan(0);
  });

  it('refuses a line longer than any series within the label limits could be', async () => {
    const limits = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1);
    const target = { ...A, job: 'j'.repeat(limits.maxLineBytes) };
    expect(await refusal(file([target], []), limits)).toEqual({
      problem: 'limits',
      message: `the header is longer than ${limits.maxLineBytes} bytes`,
      samples: 0,
    });
  });

  it('refuses a malformed series key, label name or sample count', async () => {
    const limits = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1);
    const bad: HandWrittenSeries[] = [
      { target: 0, key: 'workqueue_depth{name}', labels: { ...A, name: 'q' }, t: RECENT },
      { target: 0, key: 'workqueue_depth{name="q"}', labels: { ...A, 'bad-name': 'q' }, t: RECENT },
      { target: 0, key: 'workqueue_depth{name="q"}', labels: { ...A, name: 'q' }, t: RECENT, samples: 1e15 },
    ];
    const found = await Promise.all(bad.map((series) => refusal(file([A], [series]), limits)));
    expect(found.map((f) => [f.problem, f.message])).toEqual([
      ['damaged', 'malformed record of series 0'],
      ['damaged', 'a label name of series 0 is malformed'],
      ['limits', 'series 0 has more samples than the file may hold'],
    ]);
  });
});

describe('state file limits: sample times', () => {
  const one = (t: number[]): Buffer =>
    file([A], [{ target: 0, key: 'workqueue_depth{name="q"}', labels: { ...A, name: 'q' }, t }]);
  const limits = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1);

  it('refuses a sample at t=1e49, or any later than the clock plus the allowed skew', async () => {
    expect(await refusal(one([NOW - S, 1e49]), limits)).toEqual({
      problem: 'limits',
      message: `series 0 has a sample in the future: at 1e+49 ms, after ${new Date(NOW + STATE_FUTURE_SKEW_MS).toISOString()}`,
      samples: 0,
    });
    expect((await refusal(one([NOW + STATE_FUTURE_SKEW_MS + 1]), limits)).problem).toBe('limits');
    const history = new History();
    await restoreHistoryState(one([NOW + STATE_FUTURE_SKEW_MS]), history, { nowMs: NOW, limits });
    expect(history.stats().samples).toBeGreaterThan(0);
  });

  it('refuses times that are not whole milliseconds or not ascending', async () => {
    const found = await Promise.all(
      [one([NOW - S, NOW - S]), one([NOW, NOW - S]), one([NOW + 0.5])].map((b) => refusal(b, limits)),
    );
    expect(found.map((f) => [f.problem, f.message])).toEqual([
      ['damaged', 'the times of series 0 are not ascending'],
      ['damaged', 'the times of series 0 are not ascending'],
      ['damaged', 'a time of series 0 is not a whole number of milliseconds'],
    ]);
    const nan = Buffer.from(
      `${STATE_FORMAT} 1\n{"writtenAt":"2023-11-14T22:13:20.000Z","targets":[{"labels":{}}]}\n` +
        `{"target":0,"key":"m","labels":{},"samples":1}\n`,
    );
    const bytes = Buffer.concat([
      nan,
      Buffer.from(new Float64Array([Number.NaN, 1]).buffer),
      Buffer.from('{"end":true,"series":1}\n'),
    ]);
    expect((await refusal(gzipSync(bytes), limits)).message).toBe(
      'a time of series 0 is not a whole number of milliseconds',
    );
  });

  it('keeps of each series what the history would: the newest samples within its retention', async () => {
    const history = new History({ retentionMs: 60 * S, maxSamplesPerSeries: 3 });
    const times = Array.from({ length: 10 }, (_, i) => NOW - 90 * S + 10 * S * i);
    const bytes = file(
      [A],
      [
        { target: 0, key: 'workqueue_depth{name="q"}', labels: { ...A, name: 'q' }, t: times },
        // Older than the retention: nothing of it is kept.
        { target: 0, key: 'workqueue_depth{name="old"}', labels: { ...A, name: 'old' }, t: [NOW - 120 * S] },
      ],
    );
    const restored = await restoreHistoryState(bytes, history, { nowMs: NOW, limits });
    expect(restored).toMatchObject({ series: 1, samples: 3 });
    const [depth] = history.select({ metric: 'workqueue_depth' });
    expect([...(depth?.t ?? [])]).toEqual([NOW - 20 * S, NOW - 10 * S, NOW]);
    expect([...(depth?.v ?? [])]).toEqual([7, 8, 9]);
  });
});

describe('state file limits: stopping', () => {
  it('ends the restore with the signal reason, the history untouched', async () => {
    const stop = new AbortController();
    stop.abort(new Error('stopping'));
    const history = new History();
    const bytes = file([A], depthSeries(0, A, 3, RECENT));
    await expect(
      restoreHistoryState(bytes, history, { nowMs: NOW, limits: TEN_SERIES, signal: stop.signal }),
    ).rejects.toThrow('stopping');
    expect(history.stats().samples).toBe(0);
  });
});
