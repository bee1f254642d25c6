/**
 * Property: any set of families, rendered in either format with any legal label order and spacing,
 * parses back to exactly the families and samples rendered.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatGoFloat } from '../../src/exposition/float-text.js';
import { escapeLabelValue } from '../../src/exposition/labels.js';
import type { ExpositionFormat, MetricType } from '../../src/exposition/parsed-page.js';
import { pageSamples } from '../../src/exposition/parsed-page.js';
import { parseExposition } from '../../src/exposition/parser.js';

type LabelSet = [string, string][];

interface GenSeries {
  labels: LabelSet;
  value: number;
  /** Histogram: cumulative counts per bound (last is +Inf). Summary: values per quantile. */
  parts: number[];
  sum: number;
  count: number;
  timestampMs: number | undefined;
}

interface GenFamily {
  name: string;
  type: Exclude<MetricType, 'unknown' | 'info' | 'stateset' | 'gaugehistogram'>;
  help: string | undefined;
  bounds: number[];
  series: GenSeries[];
}

const RESERVED = /(_total|_bucket|_sum|_count|_created|_info|_gsum|_gcount)$/;
const metricName = fc.stringMatching(/^[a-zA-Z_:][a-zA-Z0-9_:]{0,10}$/).filter((n) => !RESERVED.test(n));
const labelName = fc
  .stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,6}$/)
  .filter((n) => n !== 'le' && n !== 'quantile' && !n.startsWith('__'));
const tricky = fc.constantFrom('"', '\\', '\n', 'é', '😀', ' ', '{', '}', ',', '=', '#', '\\n', '\t', 'le');
const labelValue = fc.oneof(
  fc.string({ minLength: 1, maxLength: 8 }),
  fc.array(tricky, { minLength: 1, maxLength: 5 }).map((a) => a.join('')),
);
const labelSet: fc.Arbitrary<LabelSet> = fc.uniqueArray(fc.tuple(labelName, labelValue), {
  maxLength: 4,
  selector: (p) => p[0],
});
const anyValue = fc.oneof(
  fc.double(),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e-8, 9.999999999999999e-6, 1234567),
);
const finite = fc.double({ noNaN: true, noDefaultInfinity: true });
const help = fc.option(
  fc.string({ maxLength: 20 }).filter((h) => !h.includes('\r')),
  { nil: undefined },
);

const family: fc.Arbitrary<GenFamily> = fc
  .record({
    name: metricName,
    type: fc.constantFrom('counter', 'gauge', 'histogram', 'summary', 'untyped') as fc.Arbitrary<GenFamily['type']>,
    help,
    bounds: fc.uniqueArray(finite, { minLength: 1, maxLength: 4 }).map((b) => b.sort((x, y) => x - y)),
    labelSets: fc.uniqueArray(labelSet, {
      minLength: 1,
      maxLength: 3,
      selector: (l) => JSON.stringify([...l].sort()),
    }),
    values: fc.array(
      fc.record({
        value: anyValue,
        increments: fc.array(fc.nat(1000), { minLength: 5, maxLength: 5 }),
        sum: finite,
        timestampMs: fc.option(fc.integer({ min: 0, max: 2 ** 41 }), { nil: undefined }),
      }),
      { minLength: 3, maxLength: 3 },
    ),
  })
  .map(({ name, type, help, bounds, labelSets, values }) => ({
    name,
    type,
    help,
    bounds,
    series: labelSets.map((labels, i) => {
      const v = values[i % values.length] as (typeof values)[number];
      const partsCount = type === 'histogram' ? bounds.length + 1 : 3;
      let acc = 0;
      const parts = v.increments.slice(0, partsCount).map((inc) => {
        acc += inc;
        return type === 'histogram' ? acc : inc / 7;
      });
      return { labels, value: v.value, parts, sum: v.sum, count: acc, timestampMs: v.timestampMs };
    }),
  }));

const QUANTILES = [0.5, 0.9, 0.99];

interface Style {
  reverse: boolean;
  spaceAfterComma: boolean;
  trailingComma: boolean;
  withTimestamps: boolean;
}

function renderLabels(labels: LabelSet, style: Style): string {
  if (labels.length === 0) return '';
  const pairs = style.reverse ? [...labels].reverse() : labels;
  const body = pairs.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(style.spaceAfterComma ? ', ' : ',');
  return `{${body}${style.trailingComma ? ',' : ''}}`;
}

function renderHelp(text: string, format: ExpositionFormat): string {
  let out = text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
  if (format === 'openmetrics') out = out.replace(/"/g, '\\"');
  return out;
}

interface Expected {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestampMs?: number;
}

/** OpenMetrics calls an untyped family `unknown`. */
function typeName(f: GenFamily, format: ExpositionFormat): MetricType {
  return f.type === 'untyped' && format === 'openmetrics' ? 'unknown' : f.type;
}

function familyName(f: GenFamily, format: ExpositionFormat): string {
  return f.type === 'counter' && format === 'prometheus-text' ? `${f.name}_total` : f.name;
}

function render(families: GenFamily[], format: ExpositionFormat, style: Style): { text: string; expected: Expected[] } {
  const lines: string[] = [];
  const expected: Expected[] = [];
  const ts = (ms: number | undefined): { text: string; expect?: number } => {
    if (!style.withTimestamps || ms === undefined) return { text: '' };
    if (format === 'prometheus-text') return { text: ` ${ms}`, expect: ms };
    const text = `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;
    // Prometheus's rule for OpenMetrics timestamps: int64(seconds * 1000).
    return { text: ` ${text}`, expect: Math.trunc(Number(text) * 1000) };
  };
  const emit = (name: string, labels: LabelSet, value: number, t: { text: string; expect?: number }): void => {
    lines.push(`${name}${renderLabels(labels, style)} ${formatGoFloat(value)}${t.text}`);
    const e: Expected = { name, labels: Object.fromEntries(labels), value };
    if (t.expect !== undefined) e.timestampMs = t.expect;
    expected.push(e);
  };
  for (const f of families) {
    const fname = familyName(f, format);
    if (f.help !== undefined) lines.push(`# HELP ${fname} ${renderHelp(f.help, format)}`);
    lines.push(`# TYPE ${fname} ${typeName(f, format)}`);
    for (const s of f.series) {
      const t = ts(s.timestampMs);
      switch (f.type) {
        case 'counter':
          emit(`${f.name}_total`, s.labels, s.value, t);
          break;
        case 'histogram':
          f.bounds.forEach((b, i) => {
            emit(`${f.name}_bucket`, [...s.labels, ['le', formatGoFloat(b)]], s.parts[i] as number, t);
          });
          emit(`${f.name}_bucket`, [...s.labels, ['le', '+Inf']], s.count, t);
          emit(`${f.name}_sum`, s.labels, s.sum, t);
          emit(`${f.name}_count`, s.labels, s.count, t);
          break;
        case 'summary':
          QUANTILES.forEach((q, i) => {
            emit(f.name, [...s.labels, ['quantile', String(q)]], s.parts[i] as number, t);
          });
          emit(`${f.name}_sum`, s.labels, s.sum, t);
          emit(`${f.name}_count`, s.labels, s.count, t);
          break;
        default:
          emit(f.name, s.labels, s.value, t);
      }
    }
  }
  if (format === 'openmetrics') lines.push('# EOF');
  return { text: `${lines.join('\n')}\n`, expected };
}

const style: fc.Arbitrary<Style> = fc.record({
  reverse: fc.boolean(),
  spaceAfterComma: fc.boolean(),
  trailingComma: fc.boolean(),
  withTimestamps: fc.boolean(),
});
const families = fc.uniqueArray(family, { maxLength: 6, selector: (f) => f.name });

describe.each<ExpositionFormat>(['prometheus-text', 'openmetrics'])('round trip (%s)', (format) => {
  it('parses back exactly what was rendered', () => {
    fc.assert(
      fc.property(families, style, (fams, st) => {
        const { text, expected } = render(fams, format, st);
        const page = parseExposition(text, { format });
        expect(page.families.map((f) => ({ name: f.name, type: f.type, help: f.help }))).toEqual(
          fams.map((f) => ({ name: familyName(f, format), type: typeName(f, format), help: f.help })),
        );
        const got = pageSamples(page).map((s) => ({ ...s, labels: { ...s.labels } }));
        expect(got).toEqual(expected);
        // One series per rendered label set, whatever the label order.
        expect(page.series.count).toBe(expected.length);
      }),
      { numRuns: 300, seed: 42 },
    );
  });
});
