/**
 * PromQL binary operators over instant vectors, with Prometheus 2.x semantics: arithmetic and filtering
 * comparisons against a scalar or between vectors (one-to-one, or many-to-one with `group_left`), and the set
 * operators `and`, `or`, `unless`. Which samples of two vectors meet, and the labels of each result, depend on
 * their label sets only: remembered on the operator's node while its operands keep their label sets
 * (input-plans.ts), so that each evaluation runs over the values alone.
 */
import { labelsOnly, labelsWithout, signatureOf, signatureWithoutOf, withoutMetricName } from './derived-labels.js';
import type { Expr, SetOp, VectorMatching } from './expr.js';
import { planFor, withLabelSets } from './input-plans.js';
import { namelessLabelSets } from './nameless-label-sets.js';
import type { InstantVector, Labels, VectorSample } from './vector.js';

export type BinaryExpr = Extract<Expr, { kind: 'binary' }>;

export function isComparison(op: string): boolean {
  return op === '>' || op === '<' || op === '>=' || op === '<=' || op === '==' || op === '!=';
}

/** Arithmetic result, or for comparisons the left value when true and undefined when false. */
export function arithmeticOrComparison(op: string, a: number, b: number): number | undefined {
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

/**
 * `expr` over a vector and a scalar: arithmetic gives a sample for each of the vector's, without the metric name; a
 * filtering comparison keeps the samples for which it holds, with their own value and, in Prometheus 2.x, their
 * metric name.
 */
export function vectorScalar(
  expr: BinaryExpr,
  samples: InstantVector,
  scalar: number,
  scalarOnLeft: boolean,
): InstantVector {
  const { op } = expr;
  const out: VectorSample[] = [];
  if (isComparison(op)) {
    for (const sample of samples) {
      const [a, b] = scalarOnLeft ? [scalar, sample.value] : [sample.value, scalar];
      if (arithmeticOrComparison(op, a, b) !== undefined) out.push({ labels: sample.labels, value: sample.value });
    }
    return out;
  }
  const labels = namelessLabelSets(expr, samples);
  for (let i = 0; i < samples.length; i++) {
    const value = (samples[i] as VectorSample).value;
    const [a, b] = scalarOnLeft ? [scalar, value] : [value, scalar];
    out.push({ labels: labels[i] as Labels, value: arithmeticOrComparison(op, a, b) as number });
  }
  return withLabelSets(out, labels);
}

const NO_NAMES: readonly string[] = [];
const NO_INDICES = new Int32Array(0);

function matchKey(labels: Labels, matching: VectorMatching | undefined): string {
  if (matching?.on !== undefined) return signatureOf(labels, matching.on);
  return signatureWithoutOf(labels, matching?.ignoring ?? NO_NAMES);
}

/** The samples a vector-vector operation pairs (`left[k]` of the left operand with `right[k]`) and each result's labels. */
type Pairing = {
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly labels: readonly Labels[];
};

export function vectorVector(expr: BinaryExpr, lhs: InstantVector, rhs: InstantVector): InstantVector {
  const { op, matching } = expr;
  const comparison = isComparison(op);
  const pairing = planFor(expr, [lhs, rhs], () => pairingOf(lhs, rhs, matching, comparison));
  const out: VectorSample[] = [];
  for (let k = 0; k < pairing.left.length; k++) {
    const left = (lhs[pairing.left[k] as number] as VectorSample).value;
    const result = arithmeticOrComparison(op, left, (rhs[pairing.right[k] as number] as VectorSample).value);
    if (result === undefined) continue;
    out.push({ labels: pairing.labels[k] as Labels, value: comparison ? left : result });
  }
  // Arithmetic gives a result for every pair: the output's label sets are the pairing's.
  return comparison ? out : withLabelSets(out, pairing.labels);
}

function pairingOf(
  lhs: InstantVector,
  rhs: InstantVector,
  matching: VectorMatching | undefined,
  comparison: boolean,
): Pairing {
  /** By match key, the right-hand sample's index, or -1 for a group of several. */
  const right = new Map<string, number>();
  rhs.forEach((sample, j) => {
    const key = matchKey(sample.labels, matching);
    // Several right-hand series in one group is a many-to-many match: Prometheus errors; the group is dropped here.
    right.set(key, right.has(key) ? -1 : j);
  });
  const left: number[] = [];
  const rightOfLeft: number[] = [];
  const labels: Labels[] = [];
  const seenLeft = new Set<string>();
  lhs.forEach((sample, i) => {
    const key = matchKey(sample.labels, matching);
    const j = right.get(key);
    if (j === undefined || j < 0) return;
    if (matching?.groupLeft !== true) {
      if (seenLeft.has(key)) return; // one-to-one: a duplicate left group is an error in Prometheus
      seenLeft.add(key);
    }
    left.push(i);
    rightOfLeft.push(j);
    labels.push(resultLabels(sample.labels, matching, comparison));
  });
  return { left: Int32Array.from(left), right: Int32Array.from(rightOfLeft), labels };
}

function resultLabels(labels: Labels, matching: VectorMatching | undefined, comparison: boolean): Labels {
  const base = comparison ? labels : withoutMetricName(labels);
  if (matching === undefined || matching.groupLeft === true) return base;
  if (matching.on !== undefined) return labelsOnly(base, matching.on);
  return labelsWithout(base, matching.ignoring ?? NO_NAMES);
}

/** The samples a set operation keeps: indices into the left operand, then into the right one. */
type Selection = { readonly left: Int32Array; readonly right: Int32Array };

/** `expr`, whose operator is `op`, over `lhs` and `rhs`. */
export function setOp(expr: BinaryExpr, op: SetOp, lhs: InstantVector, rhs: InstantVector): InstantVector {
  const { left, right } = planFor(expr, [lhs, rhs], () => selectionOf(op, lhs, rhs, expr.matching));
  const out: VectorSample[] = [];
  for (const i of left) out.push(lhs[i] as VectorSample);
  for (const j of right) out.push(rhs[j] as VectorSample);
  return out;
}

function selectionOf(
  op: SetOp,
  lhs: InstantVector,
  rhs: InstantVector,
  matching: VectorMatching | undefined,
): Selection {
  const indices = (vector: InstantVector, keep: (key: string) => boolean): Int32Array => {
    const kept: number[] = [];
    vector.forEach((sample, i) => {
      if (keep(matchKey(sample.labels, matching))) kept.push(i);
    });
    return Int32Array.from(kept);
  };
  if (op === 'or') {
    const leftKeys = new Set(lhs.map((s) => matchKey(s.labels, matching)));
    return { left: Int32Array.from(lhs, (_, i) => i), right: indices(rhs, (key) => !leftKeys.has(key)) };
  }
  const rightKeys = new Set(rhs.map((s) => matchKey(s.labels, matching)));
  return { left: indices(lhs, (key) => rightKeys.has(key) === (op === 'and')), right: NO_INDICES };
}
