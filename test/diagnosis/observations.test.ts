/**
 * Observations through the engine, on hand-shaped histories: each is raised exactly when its condition has
 * held for its `for`, carries its evidence and a summary with the measured values, gives way to the finding
 * that proves it (`supersededBy`), and never changes a queue's status. The report with observations is valid
 * against schemas/report.schema.json, and the text report lists them as notes, apart from the findings.
 */
import { describe, expect, it } from 'vitest';
import { type DiagnoseOptions, diagnose } from '../../src/diagnosis/engine.js';
import { OBSERVATION_IDS } from '../../src/diagnosis/observation.js';
import { OBSERVATIONS } from '../../src/diagnosis/observations/index.js';
import type { QueueReport, Report } from '../../src/diagnosis/report.js';
import { renderTextReport } from '../../src/diagnosis/text-report.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { expectValid, REPORT_SCHEMA, validateReport } from '../server/helpers.js';
import {
  apiWrites,
  queueSeries,
  reconcileErrors,
  type SeriesSpec,
  seriesRecording,
  timeMs,
} from '../support/series-recording.js';

const TARGET = { job: 'ctrl', instance: 'a:8080' };
const END = 40 * 60;

async function diagnoseAt(
  series: readonly SeriesSpec[],
  atSec = END,
  extra: Partial<DiagnoseOptions> = {},
): Promise<Report> {
  const source = recordingSourceFromText(seriesRecording({ series, durationSec: END }), 'shaped.om');
  return diagnose(source.backend, {
    atMs: timeMs(atSec),
    runbookBaseUrl: 'https://runbooks.example',
    targets: source.targets(),
    ...extra,
  });
}

function queue(report: Report, name: string): QueueReport {
  const found = report.queues.find((q) => q.queue.name === name);
  if (found === undefined) throw new Error(`no queue ${name} in ${JSON.stringify(report.queues.map((q) => q.id))}`);
  return found;
}

const ids = (q: QueueReport) => q.observations.map((o) => o.id);
const rules = (q: QueueReport) => q.findings.map((f) => f.rule);

/** A busy queue that never holds more than one key: 80 adds/s, every one finished at once. */
function busyEmptyQueue(name: string, addsPerSecond: (t: number) => number = () => 80): SeriesSpec[] {
  // Cumulative adds for a piecewise-constant rate, integrated per second.
  const cumulative = (t: number) => {
    let sum = 0;
    for (let s = 0; s < t; s++) sum += addsPerSecond(s);
    return sum;
  };
  return queueSeries(
    { ...TARGET, controller: name, name },
    {
      depth: (t) => (Math.floor(t / 15) % 4 === 0 ? 1 : 0),
      adds: cumulative,
      completions: cumulative,
    },
  );
}

describe('HighAddRateLowDepth', () => {
  it('is raised on a busy, nearly empty queue with nothing corroborating a loop, and leaves the status ok', async () => {
    const report = await diagnoseAt(busyEmptyQueue('busy'));
    const busy = queue(report, 'busy');
    expect(rules(busy)).toEqual([]);
    expect(busy.status).toBe('ok');
    expect(ids(busy)).toEqual(['HighAddRateLowDepth']);
    const [observation] = busy.observations;
    expect(observation?.evidence.addRate).toEqual({ value: 80, unit: '1/s' });
    expect(observation?.evidence.depthAvg?.value).toBeCloseTo(0.25, 1);
    expect(observation?.evidence.writeRate).toEqual({ value: null, unit: '1/s', missing: 'metric_absent' });
    expect(observation?.summary).toMatch(
      /^80\/s added, and the keys served first fall to 0 items waiting with [\d.]+ workers busy, beside .* failed API requests .*: a self-requeue loop or a busy controller with fast syncs; the metrics cannot tell which\.$/,
    );
  });

  it('gives way to a WorkqueueHotLoop finding on the same queue (API writes track the adds)', async () => {
    const report = await diagnoseAt([...busyEmptyQueue('looping'), apiWrites(TARGET, 80)]);
    const looping = queue(report, 'looping');
    expect(rules(looping)).toEqual(['WorkqueueHotLoop']);
    expect(looping.observations).toEqual([]);
  });

  it('waits until the condition has held at every step for 5 minutes', async () => {
    // 2 adds/s, then 80/s from minute 30: the 5-minute add rate reaches 50/s about 185 s later.
    const series = busyEmptyQueue('rising', (t) => (t < 1800 ? 2 : 80));
    expect(ids(queue(await diagnoseAt(series, 1800 + 185 + 200), 'rising'))).toEqual([]);
    expect(ids(queue(await diagnoseAt(series, 1800 + 185 + 360), 'rising'))).toEqual(['HighAddRateLowDepth']);
  });

  it('is not raised below 50 adds/s: an ordinary busy controller', async () => {
    expect(ids(queue(await diagnoseAt(busyEmptyQueue('calm', () => 40)), 'calm'))).toEqual([]);
  });
});

describe('RetriesWithoutErrorMetrics', () => {
  const polling = (labels: Record<string, string>) =>
    queueSeries(labels, { depth: () => 0, adds: (t) => 2 * t, completions: (t) => 2 * t, retries: (t) => 0.5 * t });

  it('is raised on sustained retries of a queue without reconcile error metrics', async () => {
    const report = await diagnoseAt(polling({ ...TARGET, name: 'plain' }));
    const plain = queue(report, 'plain');
    expect(ids(plain)).toEqual(['RetriesWithoutErrorMetrics']);
    const [observation] = plain.observations;
    expect(observation?.summary).toBe(
      'Keys are requeued with a delay at 0.5/s (2/s adds); without reconcile error metrics this is either failures retried with backoff or RequeueAfter polling.',
    );
    expect(observation?.evidence.sustainedRetryRate).toEqual({ value: 0.5, unit: '1/s' });
  });

  it('is not raised when the controller exposes reconcile errors', async () => {
    const report = await diagnoseAt([
      ...polling({ ...TARGET, controller: 'reporting', name: 'reporting' }),
      reconcileErrors(TARGET, 'reporting', 0.1),
    ]);
    // The reconcile errors tell the retries apart: steady errors, named as such, not "retries of either kind".
    expect(ids(queue(report, 'reporting'))).toEqual(['SteadyReconcileErrors']);
  });

  it('is not raised when retries are a negligible share of the adds', async () => {
    const report = await diagnoseAt(
      queueSeries(
        { ...TARGET, name: 'rare' },
        { depth: () => 0, adds: (t) => 2 * t, completions: (t) => 2 * t, retries: (t) => 0.025 * t },
      ),
    );
    expect(ids(queue(report, 'rare'))).toEqual([]);
  });
});

describe('SteadyReconcileErrors', () => {
  /** A queue of controller `name` whose reconcile errors (each retried with backoff) number `errors(t)` at `t`. */
  const failing = (name: string, errors: (t: number) => number): SeriesSpec[] => [
    ...queueSeries(
      { ...TARGET, controller: name, name },
      { depth: () => 0, adds: (t) => 0.2 * t, completions: (t) => 0.2 * t, retries: errors },
    ),
    { ...reconcileErrors(TARGET, name, 0), value: errors },
  ];

  it('is raised on two keys waiting at the 1000 s backoff cap: errors in waves, every 20-minute window holds some', async () => {
    // Each key fails at 100 s, 1,100 s and 2,100 s: 1000 s apart, further than 5 or 15 minutes.
    const report = await diagnoseAt(failing('capped', (t) => 2 * Math.floor((t + 900) / 1000)));
    const capped = queue(report, 'capped');
    expect(ids(capped)).toEqual(['SteadyReconcileErrors']);
    expect(capped.observations[0]?.evidence.steadyUnexplainedErrorRate?.value).toBeGreaterThan(0.0005);
  });

  it('ends once the last error of a stopped failure leaves the 20-minute window, not before', async () => {
    const stopped = failing('recovered', (t) => 0.1 * Math.min(t, 1200));
    expect(ids(queue(await diagnoseAt(stopped, 2280), 'recovered'))).toEqual(['SteadyReconcileErrors']);
    expect(ids(queue(await diagnoseAt(stopped, 2430), 'recovered'))).toEqual([]);
  });

  it('is not raised on two lone errors five minutes apart (they hold the window for 25 minutes, not the 30 of its for)', async () => {
    const report = await diagnoseAt(
      failing('lone', (t) => (t >= 600 ? 1 : 0) + (t >= 900 ? 1 : 0)),
      2100,
    );
    expect(ids(queue(report, 'lone'))).toEqual([]);
  });
});

describe('ListDraining', () => {
  /** 12,000 keys left at the end, falling by 67 a second: 10 adds/s, 77 completions/s. */
  const draining = queueSeries(
    { ...TARGET, controller: 'list', name: 'list' },
    { depth: (t) => 12_000 + 67 * (END - t), adds: (t) => 10 * t, completions: (t) => 77 * t },
  );

  it('is raised on a large list whose depth falls while completions keep up, with the time to drain', async () => {
    const list = queue(await diagnoseAt(draining), 'list');
    expect(rules(list)).toEqual([]);
    expect(list.status).toBe('ok');
    expect(ids(list)).toEqual(['ListDraining']);
    const [observation] = list.observations;
    // The drain rate is the slope of the depth as held at 5 s steps between its 15 s scrapes: the line's within a
    // fraction of a percent, not to the last digit.
    expect(observation?.summary).toMatch(
      /^A list of 12000 items is draining at 67(\.\d)?\/s: empty in about 2\.9\dm\.$/,
    );
    expect(observation?.evidence.timeToDrain?.unit).toBe('s');
    expect(observation?.evidence.timeToDrain?.value).toBeGreaterThan((12_000 / 67) * 0.99);
    expect(observation?.evidence.timeToDrain?.value).toBeLessThan((12_000 / 67) * 1.01);
    expect(Object.keys(observation?.evidence ?? {})).toEqual([
      'depth',
      'depthSlope',
      'recentDepthSlope',
      'trendDepthMin',
      'addRate',
      'trendAddRate',
      'balanceAddRate',
      'completionRate',
      'normalPriorityDepthSlope',
      'timeToDrain',
    ]);
  });

  it('is raised on a burst draining while the trend window still reads its rise, and no backlog is', async () => {
    // Empty while completions keep up, then 40,000 keys land at once six minutes before the end and drain at 67/s.
    const landed = END - 360;
    const burst = queueSeries(
      { ...TARGET, controller: 'burst', name: 'burst' },
      {
        depth: (t) => (t < landed ? 0 : 40_000 - 67 * (t - landed)),
        adds: (t) => 10 * t + (t < landed ? 0 : 40_000),
        completions: (t) => 10 * t + (t < landed ? 0 : 67 * (t - landed)),
      },
    );
    const report = queue(await diagnoseAt(burst), 'burst');
    expect(report.signals.depthSlope?.value).toBeGreaterThan(0);
    expect(rules(report)).toEqual([]);
    expect(ids(report)).toEqual(['ListDraining']);
    expect(report.observations[0]?.summary).toMatch(
      /^A list of 15[89]\d\d items is draining at 67(\.\d)?\/s: empty in about 3\.9\dm\.$/,
    );
  });

  it('is not raised on a standing or a small list', async () => {
    const standing = queueSeries(
      { ...TARGET, controller: 'standing', name: 'standing' },
      { depth: () => 5_000, adds: (t) => 10 * t, completions: (t) => 10 * t },
    );
    const small = queueSeries(
      { ...TARGET, controller: 'small', name: 'small' },
      { depth: (t) => Math.max(0, 10 - t / 300), adds: (t) => t, completions: (t) => 1.1 * t },
    );
    const report = await diagnoseAt([...standing, ...small]);
    expect(ids(queue(report, 'standing'))).toEqual([]);
    expect(ids(queue(report, 'small'))).toEqual([]);
  });
});

describe('observations in the report', () => {
  it('are in the schema: a report with observations and a target-level entry validates', async () => {
    const report = await diagnoseAt(busyEmptyQueue('busy'), END, {
      targets: [
        { name: 'ctrl/a:8080', labels: TARGET },
        {
          name: 'ctrl/down:8080',
          labels: { job: 'ctrl', instance: 'down:8080' },
          error: { code: 'connection_refused', message: 'connect ECONNREFUSED' },
        },
      ],
    });
    expectValid(validateReport, report);
    const down = report.queues.find((q) => q.queue.target === 'ctrl/down:8080');
    expect(down?.findings.map((f) => f.rule)).toEqual(['WorkqueueNotObservable']);
    expect(down?.observations).toEqual([]);
    expect(queue(report, 'busy').observations).toHaveLength(1);
    // Round trip through JSON, as the CLI and the API serve it.
    expectValid(validateReport, JSON.parse(JSON.stringify(report)));
  });

  it('rejects a report whose queue lacks observations or names an unknown one', async () => {
    const report = await diagnoseAt(busyEmptyQueue('busy'));
    const [first, ...rest] = report.queues;
    if (first === undefined) throw new Error('no queue');
    const { observations: _dropped, ...withoutObservations } = first;
    expect(validateReport({ ...report, queues: [withoutObservations, ...rest] })).toBe(false);
    const unknown = { ...first, observations: [{ id: 'Nope', summary: 'x', evidence: {} }] };
    expect(validateReport({ ...report, queues: [unknown, ...rest] })).toBe(false);
  });

  it('the schema lists every observation id, in the definitions order', () => {
    const definitions = REPORT_SCHEMA.definitions as Record<string, { enum?: unknown }>;
    expect(definitions.observationId?.enum).toEqual([...OBSERVATION_IDS]);
    expect(OBSERVATIONS.map((o) => o.id)).toEqual([...OBSERVATION_IDS]);
  });

  it('the text report lists them as notes after the findings, not as findings', async () => {
    const report = await diagnoseAt([
      ...busyEmptyQueue('busy'),
      // A growing backlog whose keys are also requeued with a delay: a finding and an observation.
      ...queueSeries(
        { ...TARGET, name: 'growing' },
        { depth: (t) => 100 + 0.5 * t, adds: (t) => 10 * t, completions: (t) => 9 * t, retries: (t) => 0.5 * t },
      ),
    ]);
    const text = renderTextReport(report);
    expect(text).toMatch(/^workqueue-doctor: 2 queues, 1 with findings, /);
    const busyBlock = text.slice(text.indexOf('OK  busy'));
    expect(busyBlock).toMatch(
      /^OK {2}busy {2}\[ctrl\/a:8080\]\n {2}depth .*\n {2}observations \(what the metrics suggest but cannot prove; not findings\):\n {4}note: HighAddRateLowDepth: 80\/s added, /,
    );
    const growing = queue(report, 'growing');
    expect(rules(growing)).toEqual(['WorkqueueBacklog']);
    expect(ids(growing)).toEqual(['RetriesWithoutErrorMetrics']);
    const growingBlock = text.slice(text.indexOf('WARNING  growing'), text.indexOf('OK  busy'));
    expect(growingBlock).toMatch(
      /runbook: \S+WorkqueueBacklog\.md\n {2}observations \(what the metrics suggest but cannot prove; not findings\):\n {4}note: RetriesWithoutErrorMetrics: Keys are requeued with a delay at 0\.5\/s \(10\/s adds\)/,
    );
  });
});
