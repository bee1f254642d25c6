/**
 * In-process evaluation of an `Expr` with Prometheus 2.x semantics, over any `SeriesStore`
 * (the scraped history, a replayed recording). Prometheus mode sends `renderPromQL(expr)` to the
 * server instead; both must give the same vector for the same data and time.
 */

import { aggregate } from './aggregation.js';
import { arithmeticOrComparison, type BinaryExpr, setOp, vectorScalar, vectorVector } from './binary-operators.js';
import type { Expr, LabelMatcher } from './expr.js';
import { bucketGrouping, bucketQuantiles, rangeOverSeries, type SeriesPoints } from './functions.js';
import { planFor, withLabelSets } from './input-plans.js';
import { namelessLabelSets } from './nameless-label-sets.js';
import { type StepVectors, stepVectorOf, subqueryVector } from './subquery.js';
import type { InstantVector, Labels } from './vector.js';

export { StepVectors } from './subquery.js';

export type { SeriesPoints };

/**
 * What evaluation needs from storage: selection only; the evaluator applies the functions.
 * Contract: `instant` applies the 5-minute lookback and staleness of a PromQL instant selector and
 * returns labels including `__name__`; `select` returns the series of `metric` matching `matchers`
 * with their samples in `[startMs, endMs]` (both ends included, as in Prometheus 2.x), stale markers
 * excluded, in storage order, labels without `__name__`. Series without samples in the window may be
 * included with empty arrays. The selection is read once, in order, and each series (the item and its arrays) only
 * until the next one is read, so a store may hand out every series in the same reused item and arrays.
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

/**
 * `expr` at `atMs`; with a `memo`, the expression itself and its signal nodes are looked up and kept there; with
 * `steps`, the inner vectors of its subqueries are looked up and kept by step time (valid for one state of the store,
 * across evaluation times).
 */
export function evaluate(
  expr: Expr,
  store: SeriesStore,
  atMs: number,
  memo?: SubtreeMemo,
  steps?: StepVectors,
): InstantVector {
  const remembered = memo?.get(expr);
  if (remembered !== undefined) return remembered;
  const result = evaluateValue(expr, store, atMs, memo, steps);
  const vector = result.kind === 'vector' ? result.samples : [{ labels: {}, value: result.value }];
  memo?.set(expr, vector);
  return vector;
}

function evaluateValue(
  expr: Expr,
  store: SeriesStore,
  atMs: number,
  memo: SubtreeMemo | undefined,
  steps: StepVectors | undefined,
): Value {
  switch (expr.kind) {
    case 'number':
    case 'threshold':
      return { kind: 'scalar', value: expr.value };
    case 'signal': {
      if (memo === undefined) return evaluateValue(expr.expr, store, atMs, memo, steps);
      const remembered = memo.get(expr.expr);
      if (remembered !== undefined) return { kind: 'vector', samples: remembered };
      const value = evaluateValue(expr.expr, store, atMs, memo, steps);
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
    case 'subquery': {
      const inner = expr.expr;
      const innerAt = (t: number) =>
        steps === undefined
          ? stepVectorOf(evaluate(inner, store, t))
          : steps.vectorAt(inner, t, () => evaluate(inner, store, t));
      return { kind: 'vector', samples: subqueryVector(expr, atMs, innerAt) };
    }
    case 'aggregate':
      return { kind: 'vector', samples: aggregate(expr, vectorOf(expr.expr, store, atMs, memo, steps)) };
    case 'histogram_quantile':
      return { kind: 'vector', samples: quantile(expr, vectorOf(expr.expr, store, atMs, memo, steps)) };
    case 'clamp_min':
      return { kind: 'vector', samples: clampMin(expr, vectorOf(expr.expr, store, atMs, memo, steps)) };
    case 'binary':
      return binaryOp(
        expr,
        evaluateValue(expr.lhs, store, atMs, memo, steps),
        evaluateValue(expr.rhs, store, atMs, memo, steps),
      );
  }
}

/** `fn(metric{matchers}[windowMs])` at `atMs`: series with too few points are left out, as Prometheus does. */
function rangeVector(expr: Extract<Expr, { kind: 'range' }>, store: SeriesStore, atMs: number): InstantVector {
  const { fn, metric, matchers, windowMs, param } = expr;
  return rangeOverSeries(fn, store.select(metric, matchers, atMs - windowMs, atMs), atMs, windowMs, param).samples;
}

function vectorOf(
  expr: Expr,
  store: SeriesStore,
  atMs: number,
  memo: SubtreeMemo | undefined,
  steps: StepVectors | undefined,
): InstantVector {
  const value = evaluateValue(expr, store, atMs, memo, steps);
  if (value.kind !== 'vector') throw new TypeError('expected an instant vector, got a scalar');
  return value.samples;
}

function quantile(expr: Extract<Expr, { kind: 'histogram_quantile' }>, input: InstantVector): InstantVector {
  const grouping = planFor(expr, [input], () => bucketGrouping(input));
  const quantiles = bucketQuantiles(expr.q, input, grouping).map((s) => ({ labels: s.labels, value: s.value }));
  return withLabelSets(quantiles, grouping.labels);
}

function clampMin(expr: Extract<Expr, { kind: 'clamp_min' }>, input: InstantVector): InstantVector {
  const labels = namelessLabelSets(expr, input);
  const clamped = input.map((s, i) => ({
    labels: labels[i] as Labels,
    value: Number.isNaN(s.value) ? s.value : Math.max(s.value, expr.min),
  }));
  return withLabelSets(clamped, labels);
}

function binaryOp(expr: BinaryExpr, lhs: Value, rhs: Value): Value {
  const { op } = expr;
  if (lhs.kind === 'scalar' && rhs.kind === 'scalar') {
    return { kind: 'scalar', value: arithmeticOrComparison(op, lhs.value, rhs.value) ?? Number.NaN };
  }
  if (op === 'and' || op === 'or' || op === 'unless') {
    if (lhs.kind !== 'vector' || rhs.kind !== 'vector') throw new TypeError(`${op} needs vectors on both sides`);
    return { kind: 'vector', samples: setOp(expr, op, lhs.samples, rhs.samples) };
  }
  if (lhs.kind === 'vector' && rhs.kind === 'scalar') {
    return { kind: 'vector', samples: vectorScalar(expr, lhs.samples, rhs.value, false) };
  }
  if (lhs.kind === 'scalar' && rhs.kind === 'vector') {
    return { kind: 'vector', samples: vectorScalar(expr, rhs.samples, lhs.value, true) };
  }
  if (lhs.kind === 'vector' && rhs.kind === 'vector') {
    return { kind: 'vector', samples: vectorVector(expr, lhs.samples, rhs.samples) };
  }
  throw new TypeError('unreachable operand kinds');
}
