/**
 * The history's state file: every held sample comes back exactly, under series that the next scrape of the
 * same target continues; a file that is not one, of another version or damaged is refused with its reason
 * and leaves the history untouched (the limits it is read within: state-file-limits.test.ts).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/exposition/parser.js';
import { DEFAULT_SCRAPE_SETTINGS } from '../../src/scrape/scrape-settings.js';
import { History, type ScrapeTarget } from '../../src/store/history.js';
import {
  encodeHistoryState,
  restoreHistoryState,
  STATE_FORMAT,
  StateFileError,
  type StateFileProblem,
} from '../../src/store/state-file.js';
import { stateFileLimits } from '../../src/store/state-file-limits.js';

const T0 = 1_700_000_000_000;
const S = 1000;
const A = { id: 'http://a:8080/metrics', labels: { job: 'static', instance: 'a:8080' } } satisfies ScrapeTarget;
const B = {
  id: 'pod/ns/b-0:8080',
  labels: { job: 'ctl', instance: '10.0.0.7:8080', namespace: 'ns', pod: 'b-0', container: 'manager' },
} satisfies ScrapeTarget;
const page = (text: string) => parseExposition(text);
/** The limits of a service scraping the two targets at the default settings. */
const LIMITS = stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 2);

/** Every series held, keyed by name and labels, with its samples (NaN kept as text so that it compares). */
function snapshot(history: History): Record<string, { t: number[]; v: string[] }> {
  const out: Record<string, { t: number[]; v: string[] }> = {};
  for (const metric of history.metricNames()) {
    for (const s of history.select({ metric })) {
      out[`${metric}${JSON.stringify(s.labels)}`] = {
        t: [...s.t],
        v: [...s.v].map((x) => String(Object.is(x, -0) ? '-0' : x)),
      };
    }
  }
  return out;
}

/** Two targets over five scrapes, with awkward values and label values. */
function sampleHistory(): History {
  const h = new History();
  const values = [0, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -0, 1e-300, 123456789.123, -4];
  for (let i = 0; i < 5; i++) {
    const at = T0 + 15 * S * i + (i % 2);
    h.append(
      A,
      page(
        [
          `workqueue_depth{name="q\\"uoted",controller="c"} ${values[i]}`,
          `workqueue_adds_total{name="line\\nbreak ü"} ${values[i + 3]}`,
          `workqueue_work_duration_seconds_bucket{name="q",le="+Inf"} ${i * 10}`,
          // Only in some scrapes: the others give it a stale marker.
          ...(i < 3 ? [`workqueue_retries_total{name="q"} ${i}`] : []),
          '',
        ].join('\n'),
      ),
      at,
    );
    h.append(B, page(`workqueue_depth{name="b",job="exported"} ${i}\n`), at + 7);
  }
  return h;
}

describe('state file: round trip', () => {
  it('restores every held sample of every target: same series, labels, times and values', async () => {
    const h = sampleHistory();
    const bytes = await encodeHistoryState(h, T0 + 60 * S);
    const restored = new History();
    const summary = await restoreHistoryState(bytes, restored, { nowMs: T0 + 60 * S, limits: LIMITS });
    expect(snapshot(restored)).toEqual(snapshot(h));
    expect(summary).toEqual({ writtenAtMs: T0 + 60 * S, targets: 2, series: 5, samples: h.stats().samples });
    expect(
      restored
        .targets()
        .map((t) => ({ ...t.labels }))
        .sort((x, y) => (x.job ?? '').localeCompare(y.job ?? '')),
    ).toEqual([{ ...B.labels }, { ...A.labels }]);
  });

  it('starts with the format and its version, and holds labels, not the target ids', async () => {
    const text = gunzipSync(await encodeHistoryState(sampleHistory(), T0)).toString('latin1');
    expect(
      text.startsWith(`${STATE_FORMAT} 1\n{"writtenAt":"${new Date(T0).toISOString()}","retentionMs":1800000,`),
    ).toBe(true);
    expect(text).not.toContain(A.id);
    expect(text).not.toContain(B.id);
    expect(text.endsWith('{"end":true,"series":5}\n')).toBe(true);
  });

  it('gives series that the next scrape of the target continues, staleness included', async () => {
    const h = sampleHistory();
    const restored = new History();
    await restoreHistoryState(await encodeHistoryState(h, T0), restored, { nowMs: T0 + 75 * S, limits: LIMITS });
    const [held] = restored.targets().filter((t) => t.labels.job === 'static');
    const target = { id: held?.id ?? '', labels: A.labels };
    const seriesBefore = restored.stats().series;

    restored.append(target, page('workqueue_work_duration_seconds_bucket{name="q",le="+Inf"} 50\n'), T0 + 90 * S);
    expect(restored.stats().series).toBe(seriesBefore);
    const [bucket] = restored.select({ metric: 'workqueue_work_duration_seconds_bucket' });
    expect([...(bucket?.v ?? [])]).toEqual([0, 10, 20, 30, 40, 50]);

    // A failed scrape marks the restored series of the target stale, as it would the scraped ones.
    restored.markStale(target.id, T0 + 105 * S);
    expect(restored.instant('workqueue_depth', [], T0 + 106 * S).map((s) => s.labels.job)).toEqual(['ctl']);
  });

  it('drops the samples older than the retention at the time it is read', async () => {
    const h = sampleHistory();
    const restored = new History({ retentionMs: 60 * S });
    // Samples at T0 .. T0 + 60 s; read at T0 + 100 s: those before T0 + 40 s go.
    const summary = await restoreHistoryState(await encodeHistoryState(h, T0), restored, {
      nowMs: T0 + 100 * S,
      limits: LIMITS,
    });
    const [depth] = restored.select({ metric: 'workqueue_depth' }).filter((s) => s.labels.job === 'static');
    expect([...(depth?.t ?? [])]).toEqual([T0 + 45 * S + 1, T0 + 60 * S]);
    expect(summary.samples).toBe(restored.stats().samples);
  });
});

/**
 * What test/fixtures/state/history-v1.gz holds: written by the history as of commit 80700e7 (every series' page key
 * held as a string), after these scrapes, at `T0 + 30 s`. Page keys that the series' labels do not write: clashing
 * labels renamed `exported_<name>`, two series of the same final labels, a recorded series with a target label.
 */
function keyedHistory(): History {
  const h = new History();
  for (let i = 0; i < 3; i++) {
    const lines = [
      `workqueue_depth{name="q\\"uoted",controller="c"} ${i}`,
      `m{instance="x",a="1"} ${10 + i}`,
      `m{exported_instance="x",a="1"} ${20 + i}`,
      `m{a="ü",job="j"} ${50 + i}`,
      '',
    ];
    h.append(KEYED, page(lines.join('\n')), T0 + 15 * S * i);
  }
  h.appendSamples(KEYED, 'recorded', { job: 'ctl', b: '2' }, [T0, T0 + 15 * S], [1, 2]);
  return h;
}
const KEYED = { id: 'http://a:8080/metrics', labels: { job: 'ctl', instance: 'a:8080' } } satisfies ScrapeTarget;
const fileBeforePageKeys = (): Buffer => readFileSync(new URL('../fixtures/state/history-v1.gz', import.meta.url));

describe('state file: a file written when every page key was held as a string', () => {
  it('is what the history writes now', async () => {
    const now = gunzipSync(await encodeHistoryState(keyedHistory(), T0 + 30 * S)).toString('utf8');
    expect(now).toBe(gunzipSync(fileBeforePageKeys()).toString('utf8'));
  });

  it('loads, and the next scrape of the target continues each of its series', async () => {
    const restored = new History();
    const summary = await restoreHistoryState(fileBeforePageKeys(), restored, { nowMs: T0 + 40 * S, limits: LIMITS });
    expect(snapshot(restored)).toEqual(snapshot(keyedHistory()));
    expect(summary.series).toBe(5);
    const [held] = restored.targets();
    const target = { id: held?.id ?? '', labels: KEYED.labels };
    const next = [
      'workqueue_depth{controller="c",name="q\\"uoted"} 3',
      'm{a="1",instance="x"} 13',
      'm{a="1",exported_instance="x"} 23',
      'm{a="ü",job="j"} 53',
      '',
    ];
    expect(restored.append(target, page(next.join('\n')), T0 + 45 * S).newSeries).toBe(0);
    restored.appendSamples(target, 'recorded', { job: 'ctl', b: '2' }, [T0 + 45 * S], [3]);
    expect(restored.stats().series).toBe(5);
    const renamed = restored.heldSeries(target.id, 'm').map((s): [string, number[]] => [s.key, [...s.v]]);
    expect(new Map(renamed)).toEqual(
      new Map([
        ['m{a="1",instance="x"}', [10, 11, 12, 13]],
        ['m{a="1",exported_instance="x"}', [20, 21, 22, 23]],
        ['m{a="ü",job="j"}', [50, 51, 52, 53]],
      ]),
    );
    expect(restored.heldSeries(target.id, 'recorded').map((s) => [s.key, [...s.v]])).toEqual([
      ['recorded{b="2",job="ctl"}', [1, 2, 3]],
    ]);
  });
});

describe('state file: files it refuses', () => {
  const refusal = async (
    bytes: Uint8Array,
  ): Promise<{ problem: StateFileProblem; message: string; samples: number }> => {
    const history = new History();
    try {
      await restoreHistoryState(bytes, history, { nowMs: T0 + 60 * S, limits: LIMITS });
    } catch (error) {
      if (!(error instanceof StateFileError)) throw error;
      return { problem: error.problem, message: error.message, samples: history.stats().samples };
    }
    throw new Error('the file was read');
  };
  const ours = async (): Promise<Buffer> => encodeHistoryState(sampleHistory(), T0);

  it.each([
    ['a text file', async () => Buffer.from('listen: 0.0.0.0:9808\n'), 'foreign', /not gzip-compressed/],
    [
      'gzip of something else',
      async () => gzipSync('{"kind":"other"}\n'),
      'foreign',
      /not a workqueue-doctor-history file/,
    ],
    [
      'another version',
      async () => gzipSync(`${STATE_FORMAT} 2\n{}\n`),
      'version',
      /format version "2"; .* reads version 1/,
    ],
    ['an empty file', async () => Buffer.alloc(0), 'damaged', /empty/],
    ['truncated gzip', async () => (await ours()).subarray(0, 200), 'damaged', /truncated/],
    [
      'bad gzip data',
      async () => Buffer.concat([(await ours()).subarray(0, 10), Buffer.alloc(64, 0xff)]),
      'damaged',
      /bad gzip data/,
    ],
    ['a malformed header', async () => gzipSync(`${STATE_FORMAT} 1\nnot json\n`), 'damaged', /malformed header/],
    [
      'content cut in the middle of the series (valid gzip)',
      async () => {
        const text = gunzipSync(await ours());
        return gzipSync(text.subarray(0, Math.floor(text.length * 0.7)));
      },
      'damaged',
      /truncated/,
    ],
    [
      'a series count that does not match the end',
      async () =>
        gzipSync(
          Buffer.from(
            gunzipSync(await ours())
              .toString('latin1')
              .replace('"series":5}', '"series":6}'),
            'latin1',
          ),
        ),
      'damaged',
      /5 series where the end says 6/,
    ],
  ] as const)('%s: %s', async (_what, make, problem, message) => {
    const found = await refusal(await make());
    expect(found.problem).toBe(problem);
    expect(found.message).toMatch(message);
    // The whole file is checked before anything is restored.
    expect(found.samples).toBe(0);
  });
});
