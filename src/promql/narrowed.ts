/**
 * Narrowing an expression: every selector in it given more label matchers. Shared by what renders the signals'
 * PromQL for a scope (the recording rules, dashboards, alert annotations).
 */
import type { Expr, LabelMatcher } from './expr.js';

/**
 * `expr` with `matchers` added to each of its selectors, for expressions that join series of different scopes
 * (each side narrowed by the labels it carries) before they are rendered.
 */
export function narrowed(expr: Expr, matchers: readonly LabelMatcher[]): Expr {
  switch (expr.kind) {
    case 'selector':
    case 'range':
      return { ...expr, matchers: [...expr.matchers, ...matchers] };
    case 'aggregate':
    case 'histogram_quantile':
    case 'clamp_min':
    case 'signal':
    case 'subquery':
      return { ...expr, expr: narrowed(expr.expr, matchers) };
    case 'binary':
      return { ...expr, lhs: narrowed(expr.lhs, matchers), rhs: narrowed(expr.rhs, matchers) };
    case 'number':
    case 'threshold':
      return expr;
  }
}
