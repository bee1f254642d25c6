/**
 * In-process evaluation of an `Expr` with Prometheus 2.x semantics, over any `SeriesStore`
 * (the scraped history, a replayed recording). Prometheus mode sends `renderPromQL(expr)` to the
 * server instead; both must give the same vector for the same data and time.
 */

import { labelsOnly, labelsWithout, signatureOf, signatureWithoutOf, withoutMetricName } from './derived-labels.js';
import type { AggregateOp, Expr, LabelMatcher, VectorMatching } from './expr.js';
import { histogramQuantile, rangeOverSeries, type SeriesPoints } from './functions.js';
import type { InstantVector, Labels, VectorSample } from './vector.js';

export type { SeriesPoints };

/**
 * What evaluation needs from storage: selection only; the evaluator applies the functions.
 * Contract: `instant` applies the 5-minute lookback and staleness of a PromQL instant selector and
 * returns labels including `__name__`; `select` returns the series of `metric` matching `matchers`
 * with their samples in `[startMs, endMs]` (both ends included, as in Prometheus 2.x), stale markers
 * excluded, in storage order, labels without `__name__`. Series without samples in the window may be
 * included with empty arrays. The selection is read once, in order, and each series' arrays only until the next
 * one is read, so a store may hand out every series in the same reused arrays.
 */
export interface SeriesStore {
  instant(metric: string, matchers: readonly LabelMatcher[], atMs: number): InstantVector;
  select(metric: string, matchers: readonly LabelMatcher[], startMs: number, endMs: number): Iterable<SeriesPoints>;
}

type Value = { kind: 'vector'; samples: InstantVector } | { kind: 'scalar'; value: number };

/**
 * Vectors already computed at one time: of named subtrees, by the subtree object (expressions that share a
 * signal, the same `Expr` object as every condition reading a signal definition holds, compute it once per
 * time), and of range selections, by what they select (signals that read the same rate compute it once).
 * Valid for one time and one state of the store.
 */
export type SubtreeMemo = Map<Expr | string, InstantVector>;

/** What a range node selects and computes, as a memo key. */
const rangeKeys = new WeakMap<Expr, string>();

function rangeKey(expr: Extract<Expr, { kind: 'range' }>): string {
  let key = rangeKeys.get(expr);
  if (key === undefined) {
    key = JSON.stringify([expr.fn, expr.param, expr.metric, expr.matchers, expr.windowMs]);
    rangeKeys.set(expr, key);
  }
  return key;
}

/** `expr` at `atMs`; with a `memo`, the expression itself and its signal nodes are looked up and kept there. */
export function evaluate(expr: Expr, store: SeriesStore, atMs: number, memo?: SubtreeMemo): InstantVector {
  const remembered = memo?.get(expr);
  if (remembered !== undefined) return remembered;
  const result = evaluateValue(expr, store, atMs, memo);
  const vector = result.kind === 'vector' ? result.samples : [{ labels: {}, value: result.value }];
  memo?.set(expr, vector);
  return vector;
}

function evaluateValue(expr: Expr, store: SeriesStore, atMs: number, memo: SubtreeMemo | undefined): Value {
  switch (expr.kind) {
    case 'number':
    case 'threshold':
      return { kind: 'scalar', value: expr.value };
    case 'signal': {
      if (memo === undefined) return evaluateValue(expr.expr, store, atMs, memo);
      const remembered = memo.get(expr.expr);
      if (remembered !== undefined) return { kind: 'vector', samples: remembered };
      const value = evaluateValue(expr.expr, store, atMs, memo);
      if (value.kind === 'vector') memo.set(expr.expr, value.samples);
      return value;
    }
    case 'selector':
      return { kind: 'vector', samples: store.instant(expr.metric, expr.matchers, atMs) };
    case 'range': {
      const key = memo === undefined ? undefined : rangeKey(expr);
      let samples = key === undefined ? undefined : memo?.get(key);
      if (samples === undefined) {
        samples = rangeVector(expr, store, atMs);
        if (key !== undefined) memo?.set(key, samples);
      }
      return { kind: 'vector', samples };
    }
    case 'aggregate':
      return { kind: 'vector', samples: aggregate(expr, vectorOf(expr.expr, store, atMs, memo)) };
    case 'histogram_quantile':
      return { kind: 'vector', samples: quantile(expr.q, vectorOf(expr.expr, store, atMs, memo)) };
    case 'clamp_min':
      return {
        kind: 'vector',
        samples: vectorOf(expr.expr, store, atMs, memo).map((s) => ({
          labels: withoutMetricName(s.labels),
          value: Number.isNaN(s.value) ? s.value : Math.max(s.value, expr.min),
        })),
      };
    case 'binary':
      return binaryOp(
        expr.op,
        evaluateValue(expr.lhs, store, atMs, memo),
        evaluateValue(expr.rhs, store, atMs, memo),
        expr.matching,
      );
  }
}

/** `fn(metric{matchers}[windowMs])` at `atMs`: series with too few points are left out, as Prometheus does. */
function rangeVector(expr: Extract<Expr, { kind: 'range' }>, store: SeriesStore, atMs: number): InstantVector {
  const { fn, metric, matchers, windowMs, param } = expr;
  return rangeOverSeries(fn, store.select(metric, matchers, atMs - windowMs, atMs), atMs, windowMs, param).samples;
}

function vectorOf(expr: Expr, store: SeriesStore, atMs: number, memo: SubtreeMemo | undefined): InstantVector {
  const value = evaluateValue(expr, store, atMs, memo);
  if (value.kind !== 'vector') throw new TypeError('expected an instant vector, got a scalar');
  return value.samples;
}

function aggregate(expr: Extract<Expr, { kind: 'aggregate' }>, input: InstantVector): InstantVector {
  const { op, mode, labels } = expr;
  const groups = new Map<string, { labels: Labels; values: number[] }>();
  for (const sample of input) {
    // The key from the sample's own labels; the group's labels are made once, for its first sample.
    const key = mode === 'by' ? signatureOf(sample.labels, labels) : signatureWithoutOf(sample.labels, labels);
    let group = groups.get(key);
    if (group === undefined) {
      const groupLabels =
        mode === 'by' ? labelsOnly(sample.labels, labels) : withoutMetricName(labelsWithout(sample.labels, labels));
      group = { labels: groupLabels, values: [] };
      groups.set(key, group);
    }
    group.values.push(sample.value);
  }
  const out: VectorSample[] = [];
  for (const group of groups.values()) out.push({ labels: group.labels, value: reduce(op, group.values) });
  return out;
}

function reduce(op: AggregateOp, values: readonly number[]): number {
  switch (op) {
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'count':
      return values.length;
    case 'avg':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'max':
      // PromQL max/min ignore NaN unless every value is NaN.
      return values.reduce((a, b) => (Number.isNaN(a) || b > a ? b : a), Number.NaN);
    case 'min':
      return values.reduce((a, b) => (Number.isNaN(a) || b < a ? b : a), Number.NaN);
  }
}

function quantile(q: number, input: InstantVector): InstantVector {
  return histogramQuantile(q, input).map((s) => ({ labels: s.labels, value: s.value }));
}

function binaryOp(op: string, lhs: Value, rhs: Value, matching: VectorMatching | undefined): Value {
  if (lhs.kind === 'scalar' && rhs.kind === 'scalar') {
    return { kind: 'scalar', value: arithmeticOrComparison(op, lhs.value, rhs.value) ?? Number.NaN };
  }
  if (op === 'and' || op === 'or' || op === 'unless') {
    if (lhs.kind !== 'vector' || rhs.kind !== 'vector') throw new TypeError(`${op} needs vectors on both sides`);
    return { kind: 'vector', samples: setOp(op, lhs.samples, rhs.samples, matching) };
  }
  const comparison = isComparison(op);
  if (lhs.kind === 'vector' && rhs.kind === 'scalar') {
    return { kind: 'vector', samples: vectorScalar(op, lhs.samples, rhs.value, false, comparison) };
  }
  if (lhs.kind === 'scalar' && rhs.kind === 'vector') {
    return { kind: 'vector', samples: vectorScalar(op, rhs.samples, lhs.value, true, comparison) };
  }
  if (lhs.kind === 'vector' && rhs.kind === 'vector') {
    return { kind: 'vector', samples: vectorVector(op, lhs.samples, rhs.samples, matching, comparison) };
  }
  throw new TypeError('unreachable operand kinds');
}

function isComparison(op: string): boolean {
  return op === '>' || op === '<' || op === '>=' || op === '<=' || op === '==' || op === '!=';
}

/** Arithmetic result, or for comparisons the left value when true and undefined when false. */
function arithmeticOrComparison(op: string, a: number, b: number): number | undefined {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return a / b;
    case '>':
      return a > b ? a : undefined;
    case '<':
      return a < b ? a : undefined;
    case '>=':
      return a >= b ? a : undefined;
    case '<=':
      return a <= b ? a : undefined;
    case '==':
      return a === b ? a : undefined;
    case '!=':
      return a !== b ? a : undefined;
    default:
      throw new TypeError(`unsupported operator ${op}`);
  }
}

function vectorScalar(
  op: string,
  samples: InstantVector,
  scalar: number,
  scalarOnLeft: boolean,
  comparison: boolean,
): InstantVector {
  const out: VectorSample[] = [];
  for (const sample of samples) {
    const [a, b] = scalarOnLeft ? [scalar, sample.value] : [sample.value, scalar];
    const result = arithmeticOrComparison(op, a, b);
    if (result === undefined) continue;
    // A filtering comparison keeps the vector's own value and, in Prometheus 2.x, its metric name.
    out.push(
      comparison
        ? { labels: sample.labels, value: sample.value }
        : { labels: withoutMetricName(sample.labels), value: result },
    );
  }
  return out;
}

const NO_NAMES: readonly string[] = [];

function matchKey(labels: Labels, matching: VectorMatching | undefined): string {
  if (matching?.on !== undefined) return signatureOf(labels, matching.on);
  return signatureWithoutOf(labels, matching?.ignoring ?? NO_NAMES);
}

function vectorVector(
  op: string,
  lhs: InstantVector,
  rhs: InstantVector,
  matching: VectorMatching | undefined,
  comparison: boolean,
): InstantVector {
  const right = new Map<string, VectorSample | null>();
  for (const sample of rhs) {
    const key = matchKey(sample.labels, matching);
    // Several right-hand series in one group is a many-to-many match: Prometheus errors; the group is dropped here.
    right.set(key, right.has(key) ? null : sample);
  }
  const seenLeft = new Set<string>();
  const out: VectorSample[] = [];
  for (const sample of lhs) {
    const key = matchKey(sample.labels, matching);
    const match = right.get(key);
    if (match === undefined || match === null) continue;
    if (matching?.groupLeft !== true) {
      if (seenLeft.has(key)) continue; // one-to-one: a duplicate left group is an error in Prometheus
      seenLeft.add(key);
    }
    const result = arithmeticOrComparison(op, sample.value, match.value);
    if (result === undefined) continue;
    out.push({ labels: resultLabels(sample.labels, matching, comparison), value: comparison ? sample.value : result });
  }
  return out;
}

function resultLabels(labels: Labels, matching: VectorMatching | undefined, comparison: boolean): Labels {
  const base = comparison ? labels : withoutMetricName(labels);
  if (matching === undefined || matching.groupLeft === true) return base;
  if (matching.on !== undefined) return labelsOnly(base, matching.on);
  return labelsWithout(base, matching.ignoring ?? NO_NAMES);
}

function setOp(
  op: 'and' | 'or' | 'unless',
  lhs: InstantVector,
  rhs: InstantVector,
  matching: VectorMatching | undefined,
): InstantVector {
  const rightKeys = new Set(rhs.map((s) => matchKey(s.labels, matching)));
  if (op === 'and') return lhs.filter((s) => rightKeys.has(matchKey(s.labels, matching)));
  if (op === 'unless') return lhs.filter((s) => !rightKeys.has(matchKey(s.labels, matching)));
  const leftKeys = new Set(lhs.map((s) => matchKey(s.labels, matching)));
  return [...lhs, ...rhs.filter((s) => !leftKeys.has(matchKey(s.labels, matching)))];
}
