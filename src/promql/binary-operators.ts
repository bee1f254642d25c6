/**
 * PromQL binary operators over instant vectors, with Prometheus 2.x semantics: arithmetic and filtering
 * comparisons against a scalar or between vectors (one-to-one, or many-to-one with `group_left`), and the set
 * operators `and`, `or`, `unless`. Which samples of two vectors meet, and the labels of each result, depend on
 * their label sets only: remembered on the operator's node while its operands keep their label sets
 * (input-plans.ts), so that each evaluation runs over the values alone.
 */
import { labelsOnly, labelsWithout, signatureOf, signatureWithoutOf, withoutMetricName } from './derived-labels.js';
import type { Expr, SetOp, VectorMatching } from './expr.js';
import { planFor } from './input-plans.js';
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

export function vectorScalar(
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

/** The samples a vector-vector operation pairs (`left[k]` of the left operand with `right[k]`) and each result's labels. */
type Pairing = {
  readonly left: readonly number[];
  readonly right: readonly number[];
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
  return out;
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
  const pairing = { left: [] as number[], right: [] as number[], labels: [] as Labels[] };
  const seenLeft = new Set<string>();
  lhs.forEach((sample, i) => {
    const key = matchKey(sample.labels, matching);
    const j = right.get(key);
    if (j === undefined || j < 0) return;
    if (matching?.groupLeft !== true) {
      if (seenLeft.has(key)) return; // one-to-one: a duplicate left group is an error in Prometheus
      seenLeft.add(key);
    }
    pairing.left.push(i);
    pairing.right.push(j);
    pairing.labels.push(resultLabels(sample.labels, matching, comparison));
  });
  return pairing;
}

function resultLabels(labels: Labels, matching: VectorMatching | undefined, comparison: boolean): Labels {
  const base = comparison ? labels : withoutMetricName(labels);
  if (matching === undefined || matching.groupLeft === true) return base;
  if (matching.on !== undefined) return labelsOnly(base, matching.on);
  return labelsWithout(base, matching.ignoring ?? NO_NAMES);
}

/** The samples a set operation keeps: indices into the left operand, then into the right one. */
type Selection = { readonly left: readonly number[]; readonly right: readonly number[] };

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
  const indices = (vector: InstantVector, keep: (key: string) => boolean): number[] => {
    const kept: number[] = [];
    vector.forEach((sample, i) => {
      if (keep(matchKey(sample.labels, matching))) kept.push(i);
    });
    return kept;
  };
  if (op === 'or') {
    const leftKeys = new Set(lhs.map((s) => matchKey(s.labels, matching)));
    return { left: lhs.map((_, i) => i), right: indices(rhs, (key) => !leftKeys.has(key)) };
  }
  const rightKeys = new Set(rhs.map((s) => matchKey(s.labels, matching)));
  return { left: indices(lhs, (key) => rightKeys.has(key) === (op === 'and')), right: [] };
}
