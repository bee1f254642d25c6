/**
 * The recording format (DESIGN.md §4): values that round-trip, one block per family, series in time
 * order, job/instance on every sample, `# EOF`; byte-identical for a seed; importable by promtool
 * for every scenario in both flavors.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { formatValue, RecordingStore, runVirtual, SCENARIO_NAMES } from '../../src/simulate/index.js';
import { formatLabels } from '../../src/simulate/recording-writer.js';
import { importRecording, removeTempDirs } from '../support/prometheus.js';
import { tempDir } from './helpers.js';

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  expect(text).toMatch(/^-?(\d+(\.\d+)?|\.\d+)(e[+-]\d+)?$/);
  return Number(text);
}

describe('values and labels', () => {
  it('every double round-trips exactly', () => {
    fc.assert(
      fc.property(fc.double(), (value) => {
        expect(Object.is(parseValue(formatValue(value)), value === 0 ? 0 : value) || Number.isNaN(value)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
    expect(formatValue(Number.POSITIVE_INFINITY)).toBe('+Inf');
    expect(formatValue(Number.NaN)).toBe('NaN');
    expect(formatValue(1e-8)).toBe('1e-8');
    expect(formatValue(1767225615.5)).toBe('1767225615.5');
  });

  it('labels are sorted with le last and escaped', () => {
    expect(formatLabels({ name: 'a', le: 0.5, controller: 'b"c\\d\ne' })).toBe(
      'controller="b\\"c\\\\d\\ne",name="a",le="0.5"',
    );
    expect(formatLabels({ le: '+Inf' })).toBe('le="+Inf"');
  });
});

describe('RecordingStore', () => {
  it('writes one block per family, series in time order, counters as OpenMetrics families, # EOF', async () => {
    const registry = new Registry();
    const counter = new Counter({
      name: 'demo_events_total',
      help: 'Events "seen"\nso far',
      labelNames: ['kind'],
      registers: [registry],
    });
    const gauge = new Gauge({ name: 'demo_depth', help: 'Depth', registers: [registry] });
    const histogram = new Histogram({
      name: 'demo_seconds',
      help: 'Durations',
      buckets: [0.1, 1],
      labelNames: ['kind'],
      registers: [registry],
    });
    const store = new RecordingStore({ job: 'job-a', instance: 'inst:1' });
    counter.inc({ kind: 'x' });
    gauge.set(2);
    histogram.observe({ kind: 'x' }, 0.5);
    store.add(1_000, await registry.getMetricsAsJSON());
    counter.inc({ kind: 'y' }, 3); // a series appearing later
    gauge.set(Number.NaN);
    histogram.observe({ kind: 'x' }, 5);
    store.add(16_000, await registry.getMetricsAsJSON());
    expect(store.text()).toBe(
      [
        '# HELP demo_depth Depth',
        '# TYPE demo_depth gauge',
        'demo_depth{instance="inst:1",job="job-a"} 2 1',
        'demo_depth{instance="inst:1",job="job-a"} NaN 16',
        '# HELP demo_events Events \\"seen\\"\\nso far',
        '# TYPE demo_events counter',
        'demo_events_total{instance="inst:1",job="job-a",kind="x"} 1 1',
        'demo_events_total{instance="inst:1",job="job-a",kind="x"} 1 16',
        'demo_events_total{instance="inst:1",job="job-a",kind="y"} 3 16',
        '# HELP demo_seconds Durations',
        '# TYPE demo_seconds histogram',
        'demo_seconds_bucket{instance="inst:1",job="job-a",kind="x",le="0.1"} 0 1',
        'demo_seconds_bucket{instance="inst:1",job="job-a",kind="x",le="1"} 1 1',
        'demo_seconds_bucket{instance="inst:1",job="job-a",kind="x",le="+Inf"} 1 1',
        'demo_seconds_sum{instance="inst:1",job="job-a",kind="x"} 0.5 1',
        'demo_seconds_count{instance="inst:1",job="job-a",kind="x"} 1 1',
        'demo_seconds_bucket{instance="inst:1",job="job-a",kind="x",le="0.1"} 0 16',
        'demo_seconds_bucket{instance="inst:1",job="job-a",kind="x",le="1"} 1 16',
        'demo_seconds_bucket{instance="inst:1",job="job-a",kind="x",le="+Inf"} 2 16',
        'demo_seconds_sum{instance="inst:1",job="job-a",kind="x"} 5.5 16',
        'demo_seconds_count{instance="inst:1",job="job-a",kind="x"} 2 16',
        '# EOF',
        '',
      ].join('\n'),
    );
    expect(store.sampleCount).toBe(2 + 3 + 10);
    await expect(async () => store.add(16_000, [])).rejects.toThrow(/not after/);
  });

  it('streams in chunks that join to the same text', async () => {
    const run = await runVirtual('healthy', { durationMs: 5 * 60_000 });
    const chunks: string[] = [];
    run.recording.writeTo((chunk) => chunks.push(chunk), 4_096);
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.join('')).toBe(run.recording.text());
  });
});

/** Structural checks of a recording's text. */
function checkStructure(text: string, job: string, instance: string): void {
  const lines = text.split('\n');
  expect(lines.at(-1)).toBe('');
  expect(lines.at(-2)).toBe('# EOF');
  const families = new Set<string>();
  let family = '';
  const lastTime = new Map<string, number>();
  for (const line of lines.slice(0, -2)) {
    if (line.startsWith('# HELP ')) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram)$/.exec(line);
    if (type !== null) {
      expect(families.has(type[1]!), `family ${type[1]} twice`).toBe(false);
      families.add(type[1]!);
      family = type[1]!;
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+) (\S+)$/.exec(line);
    expect(sample, line).not.toBeNull();
    const [, name, labels, value, ts] = sample!;
    expect(name!.startsWith(family), `${name} outside family ${family}`).toBe(true);
    expect(labels).toContain(`job="${job}"`);
    expect(labels).toContain(`instance="${instance}"`);
    parseValue(value!);
    const time = parseValue(ts!);
    const key = `${name}{${labels}}`;
    const previous = lastTime.get(key);
    if (previous !== undefined) expect(time, key).toBeGreaterThan(previous);
    lastTime.set(key, time);
  }
}

describe('runVirtual', () => {
  it('same seed and parameters: the same recording, byte for byte; another seed: another recording', async () => {
    const params = { durationMs: 5 * 60_000, seed: 42 };
    const a = await runVirtual('mixed', params);
    const b = await runVirtual('mixed', params);
    expect(b.recording.text()).toBe(a.recording.text());
    expect(b.truth).toEqual(a.truth);
    const c = await runVirtual('mixed', { ...params, seed: 43 });
    expect(c.recording.text()).not.toBe(a.recording.text());
  });

  it('starts at 2026-01-01T00:00:00Z by default, or at the given time; scrapes every interval', async () => {
    // Without the background's scrape jitter the scrapes are exactly on the grid (jitter: background.test.ts).
    const run = await runVirtual('healthy', { durationMs: 60_000, background: 'off' });
    const times = new Set(
      run.recording
        .text()
        .split('\n')
        .filter((line) => line.startsWith('workqueue_adds_total'))
        .map((line) => line.split(' ').at(-1)),
    );
    expect([...times]).toEqual(['1767225600', '1767225615', '1767225630', '1767225645', '1767225660']);
    const shifted = await runVirtual(
      'healthy',
      { durationMs: 60_000, background: 'off' },
      { startMs: 1_000_000_500, scrapeIntervalMs: 30_000 },
    );
    const first = shifted.recording
      .text()
      .split('\n')
      .find((line) => line.startsWith('workqueue_adds_total'));
    expect(first?.endsWith(' 1000000.5')).toBe(true);
    expect(shifted.stats.scrapes).toBe(3);
    expect(shifted.truth.parameters).toMatchObject({ start: '1970-01-12T13:46:40.500Z', scrapeInterval: '30s' });
  });
});

describe('promtool tsdb create-blocks-from openmetrics', () => {
  const work = tempDir('wqd-sim-promtool-');
  afterAll(() => {
    removeTempDirs();
    work.remove();
  });

  for (const flavor of ['controller-runtime', 'component-base'] as const) {
    it(`imports every scenario (${flavor})`, async () => {
      for (const scenario of SCENARIO_NAMES) {
        const instance = `${scenario}:8080`;
        const run = await runVirtual(scenario, { durationMs: 3 * 60_000, flavor }, { instance });
        const text = run.recording.text();
        checkStructure(text, 'workqueue-doctor-sim', instance);
        const file = join(work.path, `${flavor}-${scenario}.om`);
        writeFileSync(file, text);
        await expect(importRecording(file), `${flavor} ${scenario}`).resolves.toBeTypeOf('string');
      }
    }, 60_000);
  }
});
