/**
 * State files (src/store/state-file.ts) written by hand, as a tampered, damaged or hostile file would be: any
 * targets, records and samples, including those the service never writes.
 *
 * Contract:
 * - `stateFileOf(parts)` gives the gzip'd bytes of a version-1 state file: the targets' labels in its header,
 *   each series' record (`samples` as many as its times unless given) followed by its samples, and an end line
 *   counting the series (or `endCount`). `stateFileStream(parts)` gives the same as gzip'd chunks made only as
 *   they are read, so that `parts.series` may be a generator of more series than memory holds.
 * - `stateFileBomb(records)` is a gzip bomb shaped as a state file: a valid header, then `records` series of
 *   `BOMB_SAMPLES` valid samples each, 16 MiB decompressed per series in about 16 KB; it never ends.
 */
import { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { STATE_FORMAT, STATE_VERSION } from '../../src/store/state-file.js';
import { encodeSamples } from '../../src/store/state-samples.js';
import { deflatedRun, GZIP_HEADER } from './gzip-bomb.js';

export type HandWrittenSeries = {
  readonly target: number;
  readonly key: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly t: readonly number[];
  readonly v?: readonly number[];
  /** The record's sample count, when it is to differ from the samples written. */
  readonly samples?: number;
};

export type StateFileParts = {
  readonly writtenAtMs: number;
  readonly targets: ReadonlyArray<Readonly<Record<string, string>>>;
  readonly series: Iterable<HandWrittenSeries>;
  readonly endCount?: number;
};

export function stateFileOf(parts: StateFileParts): Buffer {
  return gzipSync(Buffer.concat([...contentOf(parts)]));
}

export function stateFileStream(parts: StateFileParts): AsyncIterable<Buffer> {
  return Readable.from(contentOf(parts)).pipe(createGzip());
}

/** Samples of each series of the bomb: 8 MiB of times (1 ms, 2 ms, and so on: long gone) and 8 MiB of values (0). */
export const BOMB_SAMPLES = 8 * 2 ** 17;

export function stateFileBomb(records: number): Buffer {
  const header = headerLine({ writtenAtMs: 0, targets: [{ job: 'static', instance: 'a:8080' }] });
  // Each time is 1 ms after the previous one (the first after 0): differences of 1.0; each value 0, so XOR 0.
  const ones = deflatedRun(Buffer.from(new Float64Array(2 ** 17).fill(1).buffer));
  const zeros = deflatedRun(Buffer.alloc(2 ** 20));
  const parts = [GZIP_HEADER, deflatedRun(header)];
  for (let i = 0; i < records; i++) {
    const record = {
      target: 0,
      key: `workqueue_depth{name="q${i}"}`,
      labels: { name: `q${i}` },
      samples: BOMB_SAMPLES,
    };
    parts.push(deflatedRun(Buffer.from(`${JSON.stringify(record)}\n`)));
    for (let m = 0; m < 8; m++) parts.push(ones);
    for (let m = 0; m < 8; m++) parts.push(zeros);
  }
  return Buffer.concat(parts);
}

/** `n` series of one target, each the `workqueue_depth` of a queue of its own, with the target's labels, at `t`. */
export function* depthSeries(
  target: number,
  targetLabels: Readonly<Record<string, string>>,
  n: number,
  t: readonly number[],
): Generator<HandWrittenSeries> {
  for (let i = 0; i < n; i++) {
    yield { target, key: `workqueue_depth{name="q${i}"}`, labels: { ...targetLabels, name: `q${i}` }, t };
  }
}

function* contentOf(parts: StateFileParts): Generator<Buffer> {
  yield headerLine(parts);
  let count = 0;
  for (const s of parts.series) {
    const record = { target: s.target, key: s.key, labels: s.labels, samples: s.samples ?? s.t.length };
    const values = s.v ?? s.t.map((_, i) => i);
    yield Buffer.concat([
      Buffer.from(`${JSON.stringify(record)}\n`),
      encodeSamples(Float64Array.from(s.t), Float64Array.from(values)),
    ]);
    count++;
  }
  yield Buffer.from(`${JSON.stringify({ end: true, series: parts.endCount ?? count })}\n`);
}

function headerLine(parts: Pick<StateFileParts, 'writtenAtMs' | 'targets'>): Buffer {
  const header = {
    writtenAt: new Date(parts.writtenAtMs).toISOString(),
    retentionMs: 1_800_000,
    targets: parts.targets.map((labels) => ({ labels })),
  };
  return Buffer.from(`${STATE_FORMAT} ${STATE_VERSION}\n${JSON.stringify(header)}\n`);
}
