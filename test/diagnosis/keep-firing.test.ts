/**
 * A rule kept firing through dips (Backlog's `keepFiringForMs`) fires, stays firing and resolves at the same
 * evaluations as a Prometheus alert with the same `for` and `keep_firing_for`: the service's holding replayed
 * against `promtool test rules` over the same series. The condition is replaced by a scripted series (the queue's
 * longest-running sync, held where it is 1 s, far from what any rule reads), so the pattern, not the queue,
 * decides when it holds: a first run long enough to fire, dips shorter
 * than the keep (the alert fires on, and its `for` is not started again), a dip as long as the keep (it
 * resolves), and a short run that is only pending before a dip (a pending alert is never kept).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { EvaluationMemory } from '../../src/diagnosis/holding.js';
import { backlog } from '../../src/diagnosis/rules/backlog.js';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { binary, num, selector, sumWithout } from '../../src/promql/expr.js';
import { diagnoseSource } from '../../src/service/diagnose-source.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { formatDuration } from '../../src/util/duration.js';
import { runTool } from '../generate/helpers.js';
import { tempDir } from '../simulate/helpers.js';
import { requireTool } from '../support/prometheus.js';

const STEP_S = 30;
const SCRAPE_S = 15;
const CONDITION = WORKQUEUE.longestRunningProcessor;
const LABELS = 'job="keep",instance="keep:8080",name="q"';
/** When the condition holds, by 30-second step (a run of `[value, steps]`). */
const PATTERN: ReadonlyArray<readonly [0 | 1, number]> = [
  [1, 25], // pending, firing after the 10-minute `for`
  [0, 10], // a dip of five minutes: kept firing
  [1, 6], // holding again: the same alert, no new `for`
  [0, 22], // eleven minutes without: kept for ten, then resolved
  [1, 8], // pending again
  [0, 2], // a dip while pending: dropped at once
  [1, 30], // pending, then firing after a whole `for`
  [0, 4],
];
const holdsAt: number[] = PATTERN.flatMap(([value, steps]) => Array<number>(steps).fill(value));
const START_MS = Date.UTC(2026, 0, 1);

const work = tempDir('wqd-keep-firing-');
afterAll(() => work.remove());

/** The recording: the scripted condition and a queue for it to belong to, scraped every 15 s. */
function recording(): string {
  const samples = holdsAt.length * (STEP_S / SCRAPE_S);
  const family = (name: string, type: string, value: (i: number) => number): string[] => [
    `# TYPE ${name} ${type}`,
    ...Array.from({ length: samples }, (_, i) => {
      const metric = type === 'counter' ? `${name}_total` : name;
      return `${metric}{${LABELS}} ${value(i)} ${(START_MS / 1000 + i * SCRAPE_S).toFixed(3)}`;
    }),
  ];
  return [
    ...family(CONDITION, 'gauge', (i) => holdsAt[Math.floor((i * SCRAPE_S) / STEP_S)] ?? 0),
    ...family(WORKQUEUE.depth, 'gauge', () => 0),
    ...family(WORKQUEUE.adds.replace(/_total$/, ''), 'counter', (i) => i),
    '# EOF',
    '',
  ].join('\n');
}

/** The steps at which the service reports Backlog firing, replaying the recording step by step. */
async function serviceFiring(): Promise<number[]> {
  const source = recordingSourceFromText(recording(), 'keep.om');
  const memory = new EvaluationMemory();
  const overrides = {
    rules: { WorkqueueBacklog: { condition: () => binary('>', sumWithout([], selector(CONDITION)), num(0)) } },
  };
  const firing: number[] = [];
  try {
    for (let step = 0; step < holdsAt.length; step++) {
      const report = await diagnoseSource(source, {
        atMs: START_MS + step * STEP_S * 1000,
        runbookBaseUrl: 'https://example.com/runbooks',
        overrides,
        memory,
      });
      const finding = report.queues
        .flatMap((q) => q.findings)
        .find((f) => f.rule === 'WorkqueueBacklog' && f.state === 'firing');
      if (finding !== undefined) firing.push(step);
    }
  } finally {
    memory.close();
    await source.close();
  }
  return firing;
}

/** promtool's verdict at every step: the same series, an alert with Backlog's `for` and `keep_firing_for`. */
async function promtoolFiring(steps: readonly number[]): Promise<{ code: number; output: string }> {
  const keepMs = backlog.keepFiringForMs ?? 0;
  const rules = {
    groups: [
      {
        name: 'keep',
        interval: `${STEP_S}s`,
        rules: [
          {
            alert: 'WorkqueueBacklog',
            expr: `${CONDITION} > 0`,
            for: formatDuration(backlog.forMs),
            keep_firing_for: formatDuration(keepMs),
          },
        ],
      },
    ],
  };
  const series = holdsAt.flatMap((v) => Array<number>(STEP_S / SCRAPE_S).fill(v)).join(' ');
  const firing = new Set(steps);
  const test = {
    rule_files: ['rules.yaml'],
    evaluation_interval: `${STEP_S}s`,
    tests: [
      {
        interval: `${SCRAPE_S}s`,
        input_series: [{ series: `${CONDITION}{${LABELS}}`, values: series }],
        alert_rule_test: holdsAt.map((_, step) => ({
          eval_time: `${step * STEP_S}s`,
          alertname: 'WorkqueueBacklog',
          exp_alerts: firing.has(step) ? [{ exp_labels: { job: 'keep', instance: 'keep:8080', name: 'q' } }] : [],
        })),
      },
    ],
  };
  writeFileSync(join(work.path, 'rules.yaml'), stringify(rules));
  writeFileSync(join(work.path, 'test.yaml'), stringify(test));
  return runTool(requireTool('promtool'), ['test', 'rules', join(work.path, 'test.yaml')]);
}

describe('a rule kept firing through dips', () => {
  it('fires, stays firing through dips shorter than its keep and resolves after it, as promtool does', async () => {
    expect(backlog.keepFiringForMs).toBeGreaterThan(0);
    const firing = await serviceFiring();
    // The script's own reading: from the 20th step (the `for`) through the first run, its dip and the next run,
    // the keep's ten minutes after that, and the last run's steps a whole `for` in.
    const kept = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    expect(firing).toEqual([...kept(20, 60), ...kept(93, 102), ...kept(103, 106)]);
    const promtool = await promtoolFiring(firing);
    expect(promtool.code, promtool.output).toBe(0);
  }, 120_000);
});
