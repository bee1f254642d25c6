/**
 * Conditions computed in-process over the signals a Prometheus-compatible server answers: a rule's condition reads
 * nothing but signals, thresholds and numbers, and the conditions of one evaluation share most of their signals.
 * Asked as one query each, the server computes every signal of every condition again (and, reading recorded
 * series, every comparison and match over them); asked signal by signal, each distinct signal is read once (one
 * recorded series per queue, where the rules are loaded) and the comparisons, matches and set operations run here,
 * with the evaluator's Prometheus semantics, over the vectors that came back.
 *
 * Contract: `planLocalConditions(exprs)` tells which expressions can be computed here (every selector and range
 * lies inside a signal node: the leaves are signals, thresholds and numbers) and the leaves to ask the server for,
 * each signal node's expression once (by object: conditions built from one signal definition hold the same object,
 * as do the report's reads of it). `computeLocally(expr, leaves)` is the expression's vector at one time from its
 * leaves' vectors at that time; a leaf missing from `leaves` is a programming error, not an empty vector.
 */
import { evaluate, type SeriesStore, type SubtreeMemo } from '../promql/evaluate.js';
import { childrenOf, type Expr } from '../promql/expr.js';
import type { InstantVector } from '../promql/vector.js';

export type LocalPlan = {
  /** Whether each expression, in order, is computed here from its leaves. */
  readonly local: readonly boolean[];
  /** The signal expressions the local ones read, each once. */
  readonly leaves: readonly Expr[];
};

/** The leaves of `expr` (its signal nodes' expressions) added to `into`; false where it reads raw series itself. */
function collectLeaves(expr: Expr, into: Set<Expr>): boolean {
  switch (expr.kind) {
    case 'signal':
      into.add(expr.expr);
      return true;
    case 'selector':
    case 'range':
    case 'subquery':
      return false;
    default:
      return childrenOf(expr).every((child) => collectLeaves(child, into));
  }
}

/** Which of `exprs` are computed here, and the signals they read (see the module contract). */
export function planLocalConditions(exprs: readonly Expr[]): LocalPlan {
  const leaves = new Set<Expr>();
  const local = exprs.map((expr) => {
    // A bare signal is a leaf itself, read from the server.
    if (expr.kind === 'signal') return false;
    const mine = new Set<Expr>();
    if (!collectLeaves(expr, mine) || mine.size === 0) return false;
    for (const leaf of mine) leaves.add(leaf);
    return true;
  });
  return { local, leaves: [...leaves] };
}

/** Every series a local condition reads comes from its leaves: reaching storage is a programming error. */
const NO_STORE: SeriesStore = {
  instant(metric) {
    throw new Error(`a condition computed locally read ${metric} outside its signals`);
  },
  select(metric) {
    throw new Error(`a condition computed locally read ${metric} outside its signals`);
  },
};

/** `expr` at `atMs` from its leaves' vectors at that time (see the module contract). */
export function computeLocally(expr: Expr, leaves: ReadonlyMap<Expr, InstantVector>, atMs: number): InstantVector {
  const memo: SubtreeMemo = new Map(leaves);
  return evaluate(expr, NO_STORE, atMs, memo);
}
