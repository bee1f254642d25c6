import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExpositionError } from '../../src/exposition/exposition-error.js';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { History } from '../../src/store/history.js';
import { loadRecording, readRecording } from '../../src/store/recording.js';
import { DEFAULT_START_SEC, generateRecording, type RecordingSpec, stepTimeMs } from '../support/recordings.js';

const dir = mkdtempSync(join(tmpdir(), 'wqd-recording-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('readRecording', () => {
  const spec: RecordingSpec = {
    steps: 40,
    targets: [
      {
        job: 'ctrl',
        instance: 'a:8080',
        queues: [{ name: 'alpha', controller: 'alpha' }],
        gap: { fromStep: 10, toStep: 12 },
      },
      { job: 'ctrl', instance: 'b:8080', queues: [{ name: 'beta' }], jitterMs: 500, seed: 9 },
    ],
  };

  it('names targets job/instance and gives the time range', async () => {
    const rec = await readRecording(write('two-targets.om', generateRecording(spec)));
    expect(rec.targets).toEqual(['ctrl/a:8080', 'ctrl/b:8080']);
    expect(rec.startMs).toBe(DEFAULT_START_SEC * 1000);
    expect(rec.endMs).toBe(stepTimeMs(spec, 1, 39));
    // 7 families per queue: 5 plain series + 2 histograms; alpha has 13 buckets, beta 11.
    expect(rec.series).toBe(5 + 2 * (13 + 2) + 5 + 2 * (11 + 2));
    expect(rec.samples).toBe(38 * (5 + 2 * 15) + 40 * (5 + 2 * 13));
    expect(rec.duplicates).toBe(0);
    const info = rec.history.targets().find((t) => t.id === 'ctrl/a:8080');
    expect(info).toMatchObject({
      labels: { instance: 'a:8080', job: 'ctrl' },
      series: 35,
      firstMs: DEFAULT_START_SEC * 1000,
    });
    const depth = rec.history.select({ metric: WORKQUEUE.depth, target: 'ctrl/a:8080' });
    expect(depth).toHaveLength(1);
    expect(depth[0]?.t.length).toBe(38);
    expect({ ...depth[0]?.labels }).toEqual({ controller: 'alpha', instance: 'a:8080', job: 'ctrl', name: 'alpha' });
  });

  it('keeps every sample: no retention limit on a recording', async () => {
    const rec = await readRecording(write('long.om', generateRecording({ ...spec, steps: 400 })));
    const [adds] = rec.history.select({ metric: WORKQUEUE.adds, target: 'ctrl/b:8080' });
    expect(adds?.t.length).toBe(400);
  });

  it('names the target after the file when samples carry no job or instance, and labels them so', () => {
    const text = generateRecording({ steps: 3, targets: [{ queues: [{ name: 'q' }] }] });
    const rec = loadRecording(text, '/recordings/plain-scrape.om');
    expect(rec.targets).toEqual(['plain-scrape.om']);
    expect(
      rec.history.instant(WORKQUEUE.depth, [], DEFAULT_START_SEC * 1000 + 30_000).map((s) => ({ ...s.labels })),
    ).toEqual([{ __name__: WORKQUEUE.depth, instance: 'plain-scrape.om', name: 'q' }]);
    expect(rec.history.targets().map((t) => ({ id: t.id, labels: { ...t.labels } }))).toEqual([
      { id: 'plain-scrape.om', labels: { instance: 'plain-scrape.om' } },
    ]);
  });

  it('keeps labelled targets as they are next to unlabelled samples', () => {
    const text = [
      '# TYPE g gauge',
      'g{job="j",instance="i:1",name="a"} 1 1700000000',
      'g{name="b"} 2 1700000000',
      'g{job="only-job"} 3 1700000000',
      '# EOF',
      '',
    ].join('\n');
    const rec = loadRecording(text, 'dir/mixed.om');
    expect(rec.targets).toEqual(['j/i:1', 'mixed.om', 'only-job/']);
    const labels = rec.history.instant('g', [], 1700000000000).map((s) => ({ ...s.labels }));
    expect(labels).toEqual(
      expect.arrayContaining([
        { __name__: 'g', instance: 'i:1', job: 'j', name: 'a' },
        { __name__: 'g', instance: 'mixed.om', name: 'b' },
        { __name__: 'g', job: 'only-job' },
      ]),
    );
    expect(labels).toHaveLength(3);
  });

  it('puts samples of a series in time order wherever they appear in the file', () => {
    const text = [
      '# TYPE g gauge',
      'g{job="j",instance="i"} 3 1700000030',
      'g{job="j",instance="i"} 1 1700000010',
      '# TYPE h gauge',
      'h{job="j",instance="i"} 5 1700000000',
      '# TYPE g gauge',
      'g{job="j",instance="i"} 2 1700000020',
      'g{job="j",instance="i"} 2.5 1700000020',
      '# EOF',
      '',
    ].join('\n');
    const rec = loadRecording(text, 'unordered.om');
    const [g] = rec.history.select({ metric: 'g' });
    expect(Array.from(g?.t ?? [])).toEqual([1700000010000, 1700000020000, 1700000030000]);
    expect(Array.from(g?.v ?? [])).toEqual([1, 2, 3]);
    expect(rec.duplicates).toBe(1);
    expect(rec.startMs).toBe(1700000000000);
    expect(rec.endMs).toBe(1700000030000);
  });

  it('appends into a given history', () => {
    const history = new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: 1000 });
    const rec = loadRecording('x{job="j",instance="i"} 1 1700000000\n# EOF\n', 'x.om', { history });
    expect(rec.history).toBe(history);
    expect(history.metricNames()).toEqual(['x']);
  });

  it.each([
    [
      'a sample without a timestamp',
      'x{job="j"} 1 1700000000\nx{job="j"} 2\n# EOF\n',
      2,
      1,
      'sample without a timestamp',
    ],
    [
      'a malformed line',
      'x{job="j"} 1 1700000000\nx{job=j} 2 1700000015\n# EOF\n',
      2,
      7,
      'expected label value, got "j"',
    ],
    ['a missing # EOF', 'x{job="j"} 1 1700000000\n', 2, 1, 'data does not end with # EOF'],
  ])('fails on %s with the file, line and column', (_what, text, line, column, reason) => {
    let caught: unknown;
    try {
      loadRecording(text, 'bad.om');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ExpositionError);
    expect(caught).toMatchObject({
      line,
      column,
      reason,
      message: `bad.om: line ${line}, column ${column}: ${reason}`,
    });
  });

  it('reads the instance label value as recorded', async () => {
    const rec = await readRecording(write('labels.om', generateRecording(spec)));
    const instances = rec.history
      .instant(WORKQUEUE.adds, [], stepTimeMs(spec, 0, 39))
      .map((s) => s.labels[LABEL.instance]);
    expect(instances.sort()).toEqual(['a:8080', 'b:8080']);
  });
});
