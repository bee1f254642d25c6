import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Counter,
  Gauge,
  Histogram,
  type OpenMetricsContentType,
  openMetricsContentType,
  Registry,
  Summary,
} from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ExpositionError } from '../../src/exposition/exposition-error.js';
import { type ExpositionFormat, type ParsedPage, pageSamples } from '../../src/exposition/parsed-page.js';
import { keepFamilies, parseExposition } from '../../src/exposition/parser.js';
import { CLIENT_GO, CONTROLLER_RUNTIME, DIAGNOSTIC_FAMILIES, LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { CLIENT_GO_FIXTURES } from '../support/fixtures.js';
import { promtoolCheckMetrics } from '../support/prometheus.js';
import { COMPONENT_BASE_BUCKETS, CONTROLLER_RUNTIME_BUCKETS } from '../support/recordings.js';
import { groupSeries, type SeriesGroup } from '../support/series-groups.js';

const FIXTURES = CLIENT_GO_FIXTURES;

/** Samples as plain objects (labels copied into ordinary objects). */
function plain(
  page: ParsedPage,
): { name: string; labels: Record<string, string>; value: number; timestampMs?: number }[] {
  return pageSamples(page).map((s) => ({ ...s, labels: { ...s.labels } }));
}

function sampleValue(page: ParsedPage, name: string, labels: Record<string, string>): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  const hit = plain(page).find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want);
  return hit?.value;
}

function group(page: ParsedPage, family: string, labels: Record<string, string>): SeriesGroup {
  const want = JSON.stringify(Object.entries(labels).sort());
  const g = groupSeries(page).find(
    (x) => x.family.name === family && JSON.stringify(Object.entries(x.labels).sort()) === want,
  );
  if (g === undefined) throw new Error(`no group ${family} ${want}`);
  return g;
}

function seriesValue(page: ParsedPage, id: number | undefined): number {
  if (id === undefined) throw new Error('no series');
  const i = page.samples.series.indexOf(id);
  return page.samples.values[i] as number;
}

async function promClientPage(
  format: ExpositionFormat,
): Promise<{ text: string; registry: Registry | Registry<OpenMetricsContentType> }> {
  const om = format === 'openmetrics';
  const registry: Registry | Registry<OpenMetricsContentType> = om
    ? new Registry<OpenMetricsContentType>()
    : new Registry();
  if (om) (registry as Registry<OpenMetricsContentType>).setContentType(openMetricsContentType);
  const jobs = new Counter({
    name: 'jobs_total',
    help: 'Jobs "done"\nsecond \\ line',
    labelNames: ['kind'],
    registers: [registry],
  });
  jobs.inc({ kind: 'a"b\\c\nd' }, 3);
  jobs.inc({ kind: 'x' }, 2);
  const temp = new Gauge({ name: 'temp_celsius', help: 'Temperature', labelNames: ['room'], registers: [registry] });
  temp.set({ room: 'cellar' }, -Infinity);
  temp.set({ room: 'attic' }, 21.5);
  temp.set({ room: 'lab' }, Number.NaN);
  const req = new Histogram({
    name: 'req_seconds',
    help: 'Request duration',
    labelNames: ['route', 'code'],
    buckets: [0.1, 1, 10],
    registers: [registry],
  });
  req.observe({ route: '/a', code: '200' }, 0.05);
  req.observe({ route: '/a', code: '200' }, 5);
  req.observe({ route: '/b', code: '500' }, 50);
  const size = new Summary({
    name: 'size_bytes',
    help: 'Sizes',
    labelNames: ['q'],
    percentiles: [0.5, 0.9],
    registers: [registry],
  });
  for (const v of [10, 20, 30]) size.observe({ q: 'x' }, v);
  return { text: await registry.metrics(), registry };
}

describe.each<ExpositionFormat>(['prometheus-text', 'openmetrics'])('prom-client output (%s)', (format) => {
  it('parses every metric type with exact values', async () => {
    const { text } = await promClientPage(format);
    const page = parseExposition(text, { format });
    const om = format === 'openmetrics';
    expect(page.format).toBe(format);
    expect(page.families.map((f) => [f.name, f.type, f.help])).toEqual([
      [om ? 'jobs' : 'jobs_total', 'counter', 'Jobs "done"\nsecond \\ line'],
      ['temp_celsius', 'gauge', 'Temperature'],
      ['req_seconds', 'histogram', 'Request duration'],
      ['size_bytes', 'summary', 'Sizes'],
    ]);
    expect(sampleValue(page, 'jobs_total', { kind: 'a"b\\c\nd' })).toBe(3);
    expect(sampleValue(page, 'jobs_total', { kind: 'x' })).toBe(2);
    expect(sampleValue(page, 'temp_celsius', { room: 'cellar' })).toBe(Number.NEGATIVE_INFINITY);
    expect(sampleValue(page, 'temp_celsius', { room: 'attic' })).toBe(21.5);
    expect(sampleValue(page, 'temp_celsius', { room: 'lab' })).toBeNaN();

    const a = group(page, 'req_seconds', { route: '/a', code: '200' });
    expect(a.buckets.map((b) => [b.bound, seriesValue(page, b.series)])).toEqual([
      [0.1, 1],
      [1, 1],
      [10, 2],
      [Number.POSITIVE_INFINITY, 2],
    ]);
    expect(seriesValue(page, a.sum)).toBe(5.05);
    expect(seriesValue(page, a.count)).toBe(2);
    const b = group(page, 'req_seconds', { route: '/b', code: '500' });
    expect(b.buckets.map((x) => seriesValue(page, x.series))).toEqual([0, 0, 0, 1]);
    expect(seriesValue(page, b.sum)).toBe(50);

    const s = group(page, 'size_bytes', { q: 'x' });
    expect(s.quantiles.map((x) => [x.bound, seriesValue(page, x.series)])).toEqual([
      [0.5, 20],
      [0.9, 30],
    ]);
    expect(seriesValue(page, s.sum)).toBe(60);
    expect(seriesValue(page, s.count)).toBe(3);
    expect(page.samples.count).toBe(2 + 3 + 12 + 4);
  });

  it('agrees with prom-client’s own JSON view of every value', async () => {
    const { text, registry } = await promClientPage(format);
    const page = parseExposition(text, { format });
    const json = await registry.getMetricsAsJSON();
    let checked = 0;
    for (const metric of json) {
      for (const v of metric.values as {
        value: number;
        labels: Record<string, string | number>;
        metricName?: string;
      }[]) {
        const labels = Object.fromEntries(Object.entries(v.labels).map(([k, x]) => [k, String(x)]));
        // In an OpenMetrics registry prom-client names a counter without `_total`; its samples have it.
        const name =
          v.metricName ??
          (String(metric.type) === 'counter' && !metric.name.endsWith('_total') ? `${metric.name}_total` : metric.name);
        expect(sampleValue(page, name, labels), `${name} ${JSON.stringify(labels)}`).toEqual(v.value);
        checked++;
      }
    }
    expect(checked).toBe(page.samples.count);
  });

  it('is accepted by promtool check metrics (stdin)', async () => {
    const { text } = await promClientPage(format);
    const result = await promtoolCheckMetrics(text);
    if (format === 'prometheus-text') {
      expect(result).toEqual({ code: 0, output: '' });
    } else {
      // promtool reads the 0.0.4 text format: it parses OpenMetrics without exemplars but lints the
      // `_total` samples of a counter family declared without `_total`.
      expect(result).toEqual({ code: 3, output: 'jobs_total no help text\n' });
    }
  });
});

describe('prom-client OpenMetrics exemplars', () => {
  it('are tolerated and discarded', async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(openMetricsContentType);
    const c = new Counter({
      name: 'hits_total',
      help: 'Hits',
      labelNames: ['path'],
      registers: [registry],
      enableExemplars: true,
    });
    c.inc({
      labels: { path: '/x' },
      value: 4,
      exemplarLabels: { traceId: 'abc' } as unknown as Record<'path', string>,
    });
    const h = new Histogram({
      name: 'lat_seconds',
      help: 'Latency',
      labelNames: ['path'],
      buckets: [0.1],
      registers: [registry],
      enableExemplars: true,
    });
    h.observe({
      labels: { path: '/x' },
      value: 0.05,
      exemplarLabels: { traceId: 'def' } as unknown as Record<'path', string>,
    });
    const text = await registry.metrics();
    expect(text).toContain('# {traceId="abc"} 4 ');
    const page = parseExposition(text, { format: 'openmetrics' });
    expect(sampleValue(page, 'hits_total', { path: '/x' })).toBe(4);
    expect(sampleValue(page, 'lat_seconds_bucket', { path: '/x', le: '0.1' })).toBe(1);
    expect(sampleValue(page, 'lat_seconds_count', { path: '/x' })).toBe(1);
  });
});

describe('client-go fixture pages', () => {
  const read = (f: string): string => readFileSync(join(FIXTURES, f), 'utf8');

  it('controller-runtime hot loop: exact values, Go-style numbers, histograms grouped with _sum/_count', () => {
    const page = parseExposition(read('controller-runtime-hotloop.prom'));
    const q = { controller: 'hotloop', name: 'hotloop' };
    expect(sampleValue(page, WORKQUEUE.adds, q)).toBe(74584);
    // `priority=""` is an empty label: dropped, as PromQL treats it as absent.
    expect(sampleValue(page, WORKQUEUE.depth, q)).toBe(1);
    expect(sampleValue(page, WORKQUEUE.longestRunningProcessor, q)).toBe(2.717e-5);
    expect(sampleValue(page, WORKQUEUE.unfinishedWork, q)).toBe(4.2473e-5);
    expect(sampleValue(page, `${WORKQUEUE.queueDuration}_bucket`, { ...q, le: '9.999999999999999e-06' })).toBe(2224);

    const wait = group(page, WORKQUEUE.queueDuration, q);
    expect(wait.family.type).toBe('histogram');
    expect(wait.buckets.map((b) => b.bound)).toEqual([...CONTROLLER_RUNTIME_BUCKETS, Number.POSITIVE_INFINITY]);
    expect(wait.buckets.map((b) => seriesValue(page, b.series))).toEqual([
      0, 0, 0, 2224, 35294, 35579, 74380, 74415, 74583, 74583, 74583, 74583, 74583,
    ]);
    expect(seriesValue(page, wait.sum)).toBe(103.46262942600018);
    expect(seriesValue(page, wait.count)).toBe(74583);
    const work = group(page, WORKQUEUE.workDuration, q);
    expect(seriesValue(page, work.sum)).toBe(88.16290990699865);
    expect(seriesValue(page, work.count)).toBe(74581);
    expect(page.families.map((f) => f.name)).toEqual([
      WORKQUEUE.adds,
      WORKQUEUE.depth,
      WORKQUEUE.longestRunningProcessor,
      WORKQUEUE.queueDuration,
      WORKQUEUE.retries,
      WORKQUEUE.unfinishedWork,
      WORKQUEUE.workDuration,
    ]);
    expect(page.series.count).toBe(35);
  });

  it('keeps Go label order (le last) as the series key', () => {
    const page = parseExposition(read('controller-runtime-hotloop.prom'));
    const keys = Array.from({ length: page.series.count }, (_, i) => page.series.key(i));
    expect(keys).toContain('workqueue_queue_duration_seconds_bucket{controller="hotloop",name="hotloop",le="1e-08"}');
    expect(keys).toContain('workqueue_depth{controller="hotloop",name="hotloop"}');
  });

  it('component-base: name label only, 10 buckets, [BETA] help', () => {
    const page = parseExposition(read('component-base-healthy.prom'));
    const q = { name: 'healthy' };
    expect(sampleValue(page, WORKQUEUE.adds, q)).toBe(577);
    const work = group(page, WORKQUEUE.workDuration, q);
    expect(work.buckets.map((b) => b.bound)).toEqual([...COMPONENT_BASE_BUCKETS, Number.POSITIVE_INFINITY]);
    expect(seriesValue(page, work.sum)).toBe(3.268984436999996);
    expect(seriesValue(page, work.count)).toBe(577);
    expect(page.families[0]?.help).toBe('[BETA] Total number of adds handled by workqueue');
  });

  it('failing controller with reconcile metrics; the diagnostic filter skips the other families', () => {
    const text = read('controller-runtime-failing-with-reconcile-metrics.prom');
    const all = parseExposition(text);
    const c = { controller: 'failing' };
    expect(sampleValue(all, CONTROLLER_RUNTIME.reconcileTotal, { ...c, result: 'error' })).toBe(53);
    expect(sampleValue(all, CONTROLLER_RUNTIME.reconcileTotal, { ...c, result: 'success' })).toBe(266);
    expect(sampleValue(all, CONTROLLER_RUNTIME.maxConcurrentReconciles, c)).toBe(2);
    const time = group(all, CONTROLLER_RUNTIME.reconcileTime, c);
    expect(time.buckets).toHaveLength(41);
    expect(time.buckets.slice(0, 3).map((b) => [b.bound, seriesValue(all, b.series)])).toEqual([
      [0.005, 33],
      [0.01, 319],
      [0.025, 319],
    ]);
    expect(seriesValue(all, time.count)).toBe(319);
    expect(sampleValue(all, 'controller_runtime_reconcile_timeouts_total', c)).toBe(0);

    const kept = parseExposition(text, { keep: keepFamilies(DIAGNOSTIC_FAMILIES) });
    // Only the timeouts family is skipped (one line: its sample); terminal errors are diagnostic.
    expect(kept.skippedLines).toBe(1);
    expect(kept.families.map((f) => f.name)).not.toContain('controller_runtime_reconcile_timeouts_total');
    expect(kept.families.map((f) => f.name)).toContain(CONTROLLER_RUNTIME.terminalReconcileErrors);
    expect(kept.families).toHaveLength(all.families.length - 1);
    expect(kept.samples.count).toBe(all.samples.count - 1);
    expect(sampleValue(kept, WORKQUEUE.retries, { ...c, name: 'failing' })).toBe(53);
  });

  it.each(['controller-runtime-backlog.prom', 'controller-runtime-blocking.prom'])('%s parses', (file) => {
    const page = parseExposition(read(file));
    expect(page.series.count).toBe(35);
    expect(page.samples.count).toBe(35);
    expect(groupSeries(page).filter((g) => g.family.type === 'histogram')).toHaveLength(2);
  });
});

describe('hand-written edge cases', () => {
  it('reads Go-style numbers, NaN and every spelling of infinity', () => {
    const page = parseExposition(
      [
        'a 1e-08',
        'b 9.999999999999999e-06',
        'c 1.234567e+06',
        'd NaN',
        'e +Inf',
        'f -Inf',
        'g Inf',
        'h .5',
        'i 5.',
        'j 1E3',
        'k -0.25',
        'l 12345678901234567890',
        'm +7',
        'n inf',
        'o Infinity',
        '',
      ].join('\n'),
    );
    expect(plain(page).map((s) => [s.name, s.value])).toEqual([
      ['a', 1e-8],
      ['b', 9.999999999999999e-6],
      ['c', 1234567],
      ['d', Number.NaN],
      ['e', Number.POSITIVE_INFINITY],
      ['f', Number.NEGATIVE_INFINITY],
      ['g', Number.POSITIVE_INFINITY],
      ['h', 0.5],
      ['i', 5],
      ['j', 1000],
      ['k', -0.25],
      ['l', 12345678901234567000],
      ['m', 7],
      ['n', Number.POSITIVE_INFINITY],
      ['o', Number.POSITIVE_INFINITY],
    ]);
  });

  it('reads timestamps: milliseconds in the text format, seconds in OpenMetrics', () => {
    expect(plain(parseExposition('x 1 1700000000123\ny 2\n'))).toEqual([
      { name: 'x', labels: {}, value: 1, timestampMs: 1700000000123 },
      { name: 'y', labels: {}, value: 2 },
    ]);
    expect(plain(parseExposition('x 1 1700000000.123\ny 2 1700000001\n# EOF\n', { format: 'openmetrics' }))).toEqual([
      { name: 'x', labels: {}, value: 1, timestampMs: 1700000000123 },
      { name: 'y', labels: {}, value: 2, timestampMs: 1700000001000 },
    ]);
  });

  it('accepts legal spacing, trailing commas, tabs, CRLF and leading blanks', () => {
    const page = parseExposition(
      [
        'm{a="x", b="y"} 1',
        'm{a="x",b="y",} 2',
        'm {\ta = "x" ,b="y" } 3',
        '  m{b="y",a="x"}\t4',
        'm{a="x",b="y"}5',
        'm{a="x",b="y"} 6\r',
        '',
        '   ',
        '# a comment',
        '#another comment',
      ].join('\n'),
    );
    expect(page.series.count).toBe(1);
    expect(page.series.key(0)).toBe('m{a="x",b="y"}');
    expect(Array.from(page.samples.values)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('unescapes label values: \\\\, \\", \\n; other escapes stay as written', () => {
    const page = parseExposition('m{a="back\\\\slash",b="q\\"uote",c="new\\nline",d="tab\\t"} 1\n');
    expect(plain(page)[0]?.labels).toEqual({ a: 'back\\slash', b: 'q"uote', c: 'new\nline', d: 'tab\\t' });
    // The key is canonical: the unknown escape is written as an escaped backslash.
    expect(page.series.key(0)).toBe('m{a="back\\\\slash",b="q\\"uote",c="new\\nline",d="tab\\\\t"}');
  });

  it('gives one series to one label set in any order, with unicode values', () => {
    const page = parseExposition('x{b="2",a="é😀"} 1\nx{a="é😀",b="2"} 2\nx{a="é😀"} 3\n');
    expect(page.series.count).toBe(2);
    expect(Array.from(page.samples.series)).toEqual([0, 0, 1]);
    expect({ ...page.series.labels(0) }).toEqual({ a: 'é😀', b: '2' });
  });

  it('drops empty label values and empty braces', () => {
    const page = parseExposition('x{a="",b="1"} 1\ny{} 2\n');
    expect(plain(page)).toEqual([
      { name: 'x', labels: { b: '1' }, value: 1 },
      { name: 'y', labels: {}, value: 2 },
    ]);
    expect(page.series.key(1)).toBe('y');
  });

  it('groups OpenMetrics counters with _total and _created, and reads UNIT', () => {
    const text = [
      '# TYPE req counter',
      '# UNIT req requests',
      '# HELP req Requests \\"served\\".',
      'req_total{code="200"} 7',
      'req_created{code="200"} 1700000000.5',
      '# TYPE lat_seconds histogram',
      '# UNIT lat_seconds seconds',
      'lat_seconds_bucket{le="1"} 1',
      'lat_seconds_bucket{le="+Inf"} 2',
      'lat_seconds_sum 3.5',
      'lat_seconds_count 2',
      'lat_seconds_created 1700000000',
      '# EOF',
    ].join('\n');
    const page = parseExposition(text, { format: 'openmetrics' });
    expect(page.families).toEqual([
      { name: 'req', type: 'counter', help: 'Requests "served".', unit: 'requests' },
      { name: 'lat_seconds', type: 'histogram', help: undefined, unit: 'seconds' },
    ]);
    const [req, lat] = groupSeries(page) as [SeriesGroup, SeriesGroup];
    expect(seriesValue(page, req.value)).toBe(7);
    expect(seriesValue(page, req.created)).toBe(1700000000.5);
    expect(lat.buckets.map((b) => b.bound)).toEqual([1, Number.POSITIVE_INFINITY]);
    expect(seriesValue(page, lat.sum)).toBe(3.5);
    expect(seriesValue(page, lat.created)).toBe(1700000000);
  });

  it('tolerates exemplars in both formats', () => {
    const lines = 'c_total{a="b"} 3 # {trace_id="x y",span="1"} 1.5 1700000000.25\nd 1 1700000000 # {} 2\n';
    const text = parseExposition(lines);
    expect(plain(text).map((s) => s.value)).toEqual([3, 1]);
    const om = parseExposition(`${lines}# EOF\n`, { format: 'openmetrics' });
    expect(plain(om).map((s) => [s.value, s.timestampMs])).toEqual([
      [3, undefined],
      [1, 1700000000000],
    ]);
  });

  it('treats # EOF as a comment in the text format and allows blank lines after it in OpenMetrics', () => {
    expect(parseExposition('a 1\n# EOF\nb 2\n').samples.count).toBe(2);
    expect(parseExposition('a 1\n# EOF\n\n\n', { format: 'openmetrics' }).samples.count).toBe(1);
    expect(parseExposition('a 1\n# EOF', { format: 'openmetrics' }).samples.count).toBe(1);
  });

  it('unescapes HELP text (\\\\ and \\n; \\" only in OpenMetrics)', () => {
    expect(parseExposition('# HELP m a\\\\b\\nc \\"d\\"\n').families[0]?.help).toBe('a\\b\nc \\"d\\"');
    expect(parseExposition('# HELP m a\\\\b\\nc \\"d\\"\n# EOF\n', { format: 'openmetrics' }).families[0]?.help).toBe(
      'a\\b\nc "d"',
    );
  });

  it('names families after samples without metadata (untyped)', () => {
    const page = parseExposition('# TYPE h histogram\nh_bucket{le="+Inf"} 1\nplain 2\nh_count 1\n');
    expect(page.families.map((f) => [f.name, f.type])).toEqual([
      ['h', 'histogram'],
      ['plain', 'untyped'],
    ]);
    // h_count comes after another family but still joins `h`.
    expect(Array.from(page.series.families)).toEqual([0, 1, 0]);
  });

  it('skips filtered families without tokenizing their lines', () => {
    const text = [
      '# TYPE noise gauge',
      'noise{this is not="valid 1',
      `# TYPE ${WORKQUEUE.depth} gauge`,
      `${WORKQUEUE.depth}{name="q"} 4`,
      `${CLIENT_GO.restClientRequests}{code="200",host="h",method="GET"} 9`,
      'go_goroutines 12',
    ].join('\n');
    const page = parseExposition(text, { keep: keepFamilies(DIAGNOSTIC_FAMILIES) });
    expect(plain(page)).toEqual([
      { name: WORKQUEUE.depth, labels: { name: 'q' }, value: 4 },
      { name: CLIENT_GO.restClientRequests, labels: { code: '200', host: 'h', method: 'GET' }, value: 9 },
    ]);
    expect(page.skippedLines).toBe(2);
  });

  it('keeps an OpenMetrics counter family named without _total', () => {
    const text = `# TYPE workqueue_adds counter\nworkqueue_adds_total{name="q"} 5\n# TYPE other counter\nother_total 1\n# EOF\n`;
    const page = parseExposition(text, { format: 'openmetrics', keep: keepFamilies(DIAGNOSTIC_FAMILIES) });
    expect(plain(page)).toEqual([{ name: WORKQUEUE.adds, labels: { name: 'q' }, value: 5 }]);
  });

  it('enforces the size and series limits', () => {
    expect(() => parseExposition('a 1\nb 2\n', { maxBytes: 7 })).toThrow(
      new ExpositionError('exposition larger than the limit of 7 bytes', 0, 0),
    );
    // Size counts UTF-8 bytes: 'é' is two.
    expect(() => parseExposition('x{a="é"} 1', { maxBytes: 10 })).toThrow(/larger than the limit of 10 bytes/);
    expect(parseExposition('x{a="é"} 1', { maxBytes: 11 }).samples.count).toBe(1);
    const err = (() => {
      try {
        parseExposition('a 1\nb 2\na 3\nc 4\n', { maxSeries: 2 });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ExpositionError);
    expect(err).toMatchObject({ line: 4, column: 1, reason: 'too many series: the limit is 2' });
  });

  it('rejects samples without timestamps when asked (recordings)', () => {
    expect(() => parseExposition('a 1 1\nb 2\n', { requireTimestamps: true, source: 'rec.om' })).toThrow(
      'rec.om: line 2, column 1: sample without a timestamp',
    );
  });

  it('never throws anything but ExpositionError on garbage', () => {
    const inputs = ['\u0000', '{}', 'a{', 'a{b', 'a{b=', 'a{b="', 'a 1 2 3', '#', '# TYPE', 'a\n\n\u00ff'];
    for (const input of inputs) {
      for (const format of ['prometheus-text', 'openmetrics'] as const) {
        try {
          parseExposition(input, { format });
        } catch (e) {
          expect(e, JSON.stringify(input)).toBeInstanceOf(ExpositionError);
        }
      }
    }
  });

  it('uses the series table for label lookups without a page-wide scan', () => {
    const page = parseExposition(`${WORKQUEUE.depth}{${LABEL.name}="a"} 1\n${WORKQUEUE.depth}{${LABEL.name}="b"} 2\n`);
    expect(page.series.name(1)).toBe(WORKQUEUE.depth);
    expect(page.series.labels(1)[LABEL.name]).toBe('b');
  });
});
