/**
 * Robustness of the diagnosis on damaged or unusual recordings: a counter reset mid-run (a restart), a
 * scrape gap, missing optional metrics, extra unrelated metrics, and a malformed file. The findings stay
 * right where the evidence survives; nothing crashes; a malformed recording gets an error naming its line.
 */
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { Report } from '../../src/diagnosis/report.js';
import { ExpositionError } from '../../src/exposition/exposition-error.js';
import { runVirtual } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';

type Line = { name: string; rest: string; value: number; timestampSec: number };

/** Splits a recording sample line into its series part, value and timestamp (the last two fields). */
function parseSampleLine(line: string): Line | undefined {
  if (line.startsWith('#') || line.trim() === '') return undefined;
  const lastSpace = line.lastIndexOf(' ');
  const valueSpace = line.lastIndexOf(' ', lastSpace - 1);
  const series = line.slice(0, valueSpace);
  const brace = series.indexOf('{');
  return {
    name: brace < 0 ? series : series.slice(0, brace),
    rest: series,
    value: Number(line.slice(valueSpace + 1, lastSpace)),
    timestampSec: Number(line.slice(lastSpace + 1)),
  };
}

const COUNTER_SUFFIXES = ['_total', '_bucket', '_sum', '_count'];
const isCounterSeries = (name: string) => COUNTER_SUFFIXES.some((s) => name.endsWith(s));

/** Every counter restarts from zero at `atSec`, as when the controller process restarts. */
function withCounterReset(text: string, atSec: number): string {
  const base = new Map<string, number>();
  let reset = 0;
  const out = text
    .split('\n')
    .map((line) => {
      const sample = parseSampleLine(line);
      if (sample === undefined || !isCounterSeries(sample.name)) return line;
      if (sample.timestampSec < atSec) {
        base.set(sample.rest, sample.value);
        return line;
      }
      const value = sample.value - (base.get(sample.rest) ?? 0);
      if (value !== sample.value) reset++;
      return `${sample.rest} ${value} ${sample.timestampSec}`;
    })
    .join('\n');
  if (reset === 0) throw new Error('the reset changed no sample');
  return out;
}

/** Drops every sample in `[fromSec, toSec)`: the target could not be scraped for a while. */
function withGap(text: string, fromSec: number, toSec: number): string {
  const out = text
    .split('\n')
    .filter((line) => {
      const sample = parseSampleLine(line);
      return sample === undefined || sample.timestampSec < fromSec || sample.timestampSec >= toSec;
    })
    .join('\n');
  if (out.length === text.length) throw new Error('the gap removed no sample');
  return out;
}

/** Drops whole families whose name starts with one of `prefixes`. */
function withoutFamilies(text: string, prefixes: readonly string[]): string {
  return text
    .split('\n')
    .filter((line) => {
      const name = line.startsWith('# ') ? (line.split(' ')[2] ?? '') : (parseSampleLine(line)?.name ?? '');
      return !prefixes.some((p) => name.startsWith(p));
    })
    .join('\n');
}

/** Adds unrelated families (Go runtime, process) with samples at the recording's times. */
function withUnrelatedFamilies(text: string, timesSec: readonly number[]): string {
  const extra = [
    '# TYPE go_goroutines gauge',
    '# HELP go_goroutines Number of goroutines that currently exist.',
    ...timesSec.map((t, i) => `go_goroutines{job="workqueue-doctor-sim",instance="x:8080"} ${100 + (i % 7)} ${t}`),
    '# TYPE process_cpu_seconds counter',
    ...timesSec.map(
      (t, i) => `process_cpu_seconds_total{job="workqueue-doctor-sim",instance="x:8080"} ${i * 0.5} ${t}`,
    ),
  ];
  return text.replace('# EOF', `${extra.join('\n')}\n# EOF`);
}

async function diagnoseText(text: string, file = 'damaged.om'): Promise<Report> {
  const source = recordingSourceFromText(text, file);
  const range = source.dataRange();
  if (range === undefined) throw new Error('empty recording');
  return diagnose(source.backend, {
    atMs: range.endMs,
    runbookBaseUrl: 'https://runbooks.example',
    targets: source.targets(),
  });
}

function rulesOf(report: Report, name: string): string[] {
  return report.queues.filter((q) => q.queue.name === name).flatMap((q) => q.findings.map((f) => f.rule));
}

describe('diagnosis on damaged recordings', () => {
  const startSec = Date.UTC(2026, 0, 1) / 1000;
  const recording = (scenario: string) => runVirtual(scenario, { seed: 3 }).then((r) => r.recording.text());

  it('keeps a hot loop through a counter reset mid-run', async () => {
    const text = withCounterReset(await recording('hot-loop-status-write'), startSec + 12 * 60);
    expect(rulesOf(await diagnoseText(text), 'ingress-status')).toEqual(['WorkqueueHotLoop']);
  });

  it('keeps a backlog through a counter reset inside the last windows', async () => {
    const text = withCounterReset(await recording('backlog'), startSec + 26 * 60);
    expect(rulesOf(await diagnoseText(text), 'pod')).toContain('WorkqueueBacklog');
  });

  it('keeps persistent failures through a two-minute scrape gap', async () => {
    const text = withGap(await recording('persistent-failure'), startSec + 20 * 60, startSec + 22 * 60);
    expect(rulesOf(await diagnoseText(text), 'dbuser')).toEqual(['WorkqueuePersistentFailures']);
  });

  it('reports missing optional metrics as metric_absent instead of guessing', async () => {
    const text = withoutFamilies(await recording('hot-loop-status-write'), ['controller_runtime_', 'rest_client_']);
    const report = await diagnoseText(text);
    const queue = report.queues.find((q) => q.queue.name === 'ingress-status');
    expect(queue?.signals.maxWorkers).toEqual({ value: null, unit: 'workers', missing: 'metric_absent' });
    expect(queue?.signals.writeRate).toEqual({ value: null, unit: '1/s', missing: 'metric_absent' });
    expect(queue?.signals.reconcileErrorRate).toEqual({ value: null, unit: '1/s', missing: 'metric_absent' });
    // The queue's own metrics are still read.
    expect(queue?.signals.addRate?.value).toBeGreaterThan(10);
    expect(queue?.findings.map((f) => f.rule) ?? []).not.toContain('WorkqueueSaturated');
  });

  it('ignores unrelated metric families', async () => {
    const original = await recording('blocking-call');
    const times = [
      ...new Set(
        original
          .split('\n')
          .map((l) => parseSampleLine(l)?.timestampSec)
          .filter((t) => t !== undefined),
      ),
    ];
    const report = await diagnoseText(withUnrelatedFamilies(original, times as number[]));
    expect(rulesOf(report, 'volumesnapshot')).toEqual(['WorkqueueSlowWork']);
    expect(report.queues.filter((q) => q.queue.name !== null)).toHaveLength(1);
  });

  it('says which line of a malformed recording is wrong', async () => {
    const lines = (await recording('healthy')).split('\n');
    lines[41] = 'workqueue_depth{name="deployment" 3 1767225600';
    let caught: unknown;
    try {
      await diagnoseText(lines.join('\n'), 'broken.om');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ExpositionError);
    expect((caught as ExpositionError).line).toBe(42);
    expect((caught as Error).message).toContain('broken.om');
  });
});
