/**
 * Renders an `Expr` as PromQL text. The output is what alerts, dashboards and Prometheus mode run,
 * so it is deterministic (stable label order, shortest number form) and fully parenthesised where
 * precedence could surprise a reader.
 */
import type { Expr, LabelMatcher, VectorMatching } from './expr.js';

export type RenderOptions = {
  /**
   * Extra matchers added to every selector, e.g. dashboard variables (`job=~"$job"`).
   * They come after the definition's own matchers.
   */
  readonly extraMatchers?: readonly LabelMatcher[];
  /** Replaces every range window, e.g. `$__rate_interval`; by default the definition's window is printed. */
  readonly windowOverride?: string;
};

export function renderPromQL(expr: Expr, options: RenderOptions = {}): string {
  return render(expr, options);
}

function render(expr: Expr, options: RenderOptions): string {
  switch (expr.kind) {
    case 'selector':
      return expr.metric + renderMatchers([...expr.matchers, ...(options.extraMatchers ?? [])]);
    case 'range': {
      const window = options.windowOverride ?? formatDuration(expr.windowMs);
      const inner = expr.metric + renderMatchers([...expr.matchers, ...(options.extraMatchers ?? [])]);
      return `${expr.fn}(${inner}[${window}])`;
    }
    case 'aggregate':
      return `${expr.op} ${expr.mode} (${expr.labels.join(', ')}) (${render(expr.expr, options)})`;
    case 'histogram_quantile':
      return `histogram_quantile(${formatNumber(expr.q)}, ${render(expr.expr, options)})`;
    case 'clamp_min':
      return `clamp_min(${render(expr.expr, options)}, ${formatNumber(expr.min)})`;
    case 'number':
      return formatNumber(expr.value);
    case 'binary': {
      const lhs = renderOperand(expr.lhs, options);
      const rhs = renderOperand(expr.rhs, options);
      return `${lhs} ${expr.op}${renderMatching(expr.matching)} ${rhs}`;
    }
  }
}

/** Binary operands are parenthesised unless they are atoms, so the tree's shape survives precedence rules. */
function renderOperand(expr: Expr, options: RenderOptions): string {
  const text = render(expr, options);
  return expr.kind === 'binary' || expr.kind === 'aggregate' ? `(${text})` : text;
}

function renderMatching(matching: VectorMatching | undefined): string {
  if (matching === undefined) return '';
  let text = '';
  if (matching.on !== undefined) text += ` on (${matching.on.join(', ')})`;
  else if (matching.ignoring !== undefined) text += ` ignoring (${matching.ignoring.join(', ')})`;
  if (matching.groupLeft === true) text += ' group_left';
  return text;
}

function renderMatchers(matchers: readonly LabelMatcher[]): string {
  if (matchers.length === 0) return '';
  return `{${matchers.map((m) => `${m.label}${m.op}${JSON.stringify(m.value)}`).join(', ')}}`;
}

export function formatNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

/** Milliseconds as a Prometheus duration: `5m`, `1h30m`, `90s`, `1500ms`. */
export function formatDuration(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0) throw new RangeError(`not a whole non-negative number of milliseconds: ${ms}`);
  if (ms === 0) return '0s';
  const units: Array<[string, number]> = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
    ['ms', 1],
  ];
  let rest = ms;
  let text = '';
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      text += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return text;
}
