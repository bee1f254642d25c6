/**
 * A small PromQL subset as data. Signals and diagnosis conditions are written once as `Expr` trees;
 * `renderPromQL` turns a tree into the query Prometheus runs (alerts, dashboards, Prometheus mode) and
 * `evaluate` computes the same tree in-process over the scraped history, with Prometheus semantics.
 * That is what keeps the service, the alerts and the dashboards in agreement.
 */

import type { LabelMatcher } from '../exposition/labels.js';

export type { LabelMatcher };

/** Functions over a range vector `metric[window]`. */
export type RangeFunction =
  | 'rate'
  | 'increase'
  | 'deriv'
  | 'delta'
  | 'avg_over_time'
  | 'min_over_time'
  | 'max_over_time'
  | 'count_over_time'
  | 'quantile_over_time';

/** Functions the signals apply over a subquery. */
export type SubqueryFunction = 'deriv' | 'quantile_over_time';

export type AggregateOp = 'sum' | 'max' | 'min' | 'count' | 'avg';
export type ArithmeticOp = '+' | '-' | '*' | '/';
export type ComparisonOp = '>' | '<' | '>=' | '<=' | '==' | '!=';
export type SetOp = 'and' | 'or' | 'unless';

/** Vector matching for binary operators between two vectors (PromQL `on(...)`/`ignoring(...)`, `group_left`). */
export type VectorMatching = {
  readonly on?: readonly string[];
  readonly ignoring?: readonly string[];
  /** many-to-one: the left side may hold several series per match group. */
  readonly groupLeft?: boolean;
};

export type Expr =
  | { readonly kind: 'selector'; readonly metric: string; readonly matchers: readonly LabelMatcher[] }
  | {
      readonly kind: 'range';
      readonly fn: RangeFunction;
      readonly metric: string;
      readonly matchers: readonly LabelMatcher[];
      /** Window in milliseconds. */
      readonly windowMs: number;
      /** The φ of `quantile_over_time(φ, metric[window])`, 0 to 1; absent for every other function. */
      readonly param?: number;
    }
  /**
   * `fn((expr)[window:step])`: `expr` evaluated at every multiple of `step` after the window's start through its end,
   * and `fn` over those points. The window is open at its start, as Prometheus 3 and VictoriaMetrics take a
   * subquery's range; Prometheus 2, whose ranges are closed, is sent it a millisecond shorter (render.ts), so that
   * every server reads the same steps.
   */
  | {
      readonly kind: 'subquery';
      readonly fn: SubqueryFunction;
      readonly expr: Expr;
      /** Window in milliseconds. */
      readonly windowMs: number;
      /** Step in milliseconds. */
      readonly stepMs: number;
      /** The φ of `quantile_over_time(φ, (expr)[window:step])`, 0 to 1; absent for every other function. */
      readonly param?: number;
    }
  | {
      readonly kind: 'aggregate';
      readonly op: AggregateOp;
      readonly mode: 'by' | 'without';
      readonly labels: readonly string[];
      readonly expr: Expr;
    }
  | { readonly kind: 'histogram_quantile'; readonly q: number; readonly expr: Expr }
  | {
      readonly kind: 'binary';
      readonly op: ArithmeticOp | ComparisonOp | SetOp;
      readonly lhs: Expr;
      readonly rhs: Expr;
      readonly matching?: VectorMatching;
    }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'clamp_min'; readonly expr: Expr; readonly min: number }
  /** A named signal: computed and printed as its `expr`; the name says what the subtree is. */
  | { readonly kind: 'signal'; readonly id: string; readonly expr: Expr }
  /** A named threshold: computed and printed as the plain number `value`. */
  | { readonly kind: 'threshold'; readonly name: string; readonly value: number };

// ---- builders: terse constructors so definitions read like PromQL ----

export function selector(metric: string, matchers: readonly LabelMatcher[] = []): Expr {
  return { kind: 'selector', metric, matchers };
}

export function rangeFn(
  fn: Exclude<RangeFunction, 'quantile_over_time'>,
  metric: string,
  windowMs: number,
  matchers: readonly LabelMatcher[] = [],
): Expr {
  return { kind: 'range', fn, metric, matchers, windowMs };
}

/** `quantile_over_time(φ, metric{matchers}[window])`. */
export function quantileOverTime(
  phi: number,
  metric: string,
  windowMs: number,
  matchers: readonly LabelMatcher[] = [],
): Expr {
  return { kind: 'range', fn: 'quantile_over_time', metric, matchers, windowMs, param: phi };
}

/** `fn((expr)[window:step])`. */
export function subquery(
  fn: Exclude<SubqueryFunction, 'quantile_over_time'>,
  expr: Expr,
  windowMs: number,
  stepMs: number,
): Expr {
  return { kind: 'subquery', fn, expr, windowMs, stepMs };
}

/** `quantile_over_time(φ, (expr)[window:step])`: the φ-quantile of `expr` at the window's steps. */
export function quantileOverSubquery(phi: number, expr: Expr, windowMs: number, stepMs: number): Expr {
  return { kind: 'subquery', fn: 'quantile_over_time', expr, windowMs, stepMs, param: phi };
}

export function sumWithout(labels: readonly string[], expr: Expr): Expr {
  return { kind: 'aggregate', op: 'sum', mode: 'without', labels, expr };
}

export function aggregateBy(op: AggregateOp, labels: readonly string[], expr: Expr): Expr {
  return { kind: 'aggregate', op, mode: 'by', labels, expr };
}

export function aggregateWithout(op: AggregateOp, labels: readonly string[], expr: Expr): Expr {
  return { kind: 'aggregate', op, mode: 'without', labels, expr };
}

export function histogramQuantile(q: number, expr: Expr): Expr {
  return { kind: 'histogram_quantile', q, expr };
}

export function num(value: number): Expr {
  return { kind: 'number', value };
}

/** The signal `id`, whose expression is `expr`. */
export function signalRef(id: string, expr: Expr): Expr {
  return { kind: 'signal', id, expr };
}

/** The threshold `name` with the value in force. */
export function threshold(name: string, value: number): Expr {
  return { kind: 'threshold', name, value };
}

export function binary(op: ArithmeticOp | ComparisonOp | SetOp, lhs: Expr, rhs: Expr, matching?: VectorMatching): Expr {
  return matching === undefined ? { kind: 'binary', op, lhs, rhs } : { kind: 'binary', op, lhs, rhs, matching };
}

export function clampMin(expr: Expr, min: number): Expr {
  return { kind: 'clamp_min', expr, min };
}

/** `a and b and c ...` (PromQL's `and` is left-associative). */
export function allOf(first: Expr, ...rest: Expr[]): Expr {
  return rest.reduce((acc, next) => binary('and', acc, next), first);
}

/** `a or b or c ...`. */
export function anyOf(first: Expr, ...rest: Expr[]): Expr {
  return rest.reduce((acc, next) => binary('or', acc, next), first);
}

export function eq(label: string, value: string): LabelMatcher {
  return { label, op: '=', value };
}

export function regexMatch(label: string, value: string): LabelMatcher {
  return { label, op: '=~', value };
}

/** The direct subexpressions of `expr`, left to right. */
export function childrenOf(expr: Expr): Expr[] {
  switch (expr.kind) {
    case 'aggregate':
    case 'histogram_quantile':
    case 'clamp_min':
    case 'signal':
    case 'subquery':
      return [expr.expr];
    case 'binary':
      return [expr.lhs, expr.rhs];
    case 'selector':
    case 'range':
    case 'number':
    case 'threshold':
      return [];
  }
}

/** The metric names an expression reads, for "which metric is absent" reporting. */
export function metricsOf(expr: Expr): string[] {
  const names = new Set<string>();
  const visit = (e: Expr): void => {
    if (e.kind === 'selector' || e.kind === 'range') names.add(e.metric);
    else childrenOf(e).forEach(visit);
  };
  visit(expr);
  return [...names];
}

/**
 * The longest range an expression reads (`metric[window]`), in milliseconds; 0 when it reads only instant
 * vectors. Data spanning less than it is a partial window for at least one of the expression's range functions.
 */
export function longestRangeOf(expr: Expr): number {
  if (expr.kind === 'range') return expr.windowMs;
  if (expr.kind === 'subquery') return expr.windowMs + longestRangeOf(expr.expr);
  return childrenOf(expr).reduce((longest, child) => Math.max(longest, longestRangeOf(child)), 0);
}
