/**
 * Renders an `Expr` as PromQL text. The output is what alerts, dashboards and Prometheus mode run,
 * so it is deterministic (stable label order, shortest number form) and fully parenthesised where
 * precedence could surprise a reader.
 */
import { formatFloat } from '../exposition/float-text.js';
import { formatDuration } from '../util/duration.js';
import type { Expr, LabelMatcher, VectorMatching } from './expr.js';

export { formatDuration };

export type RenderOptions = {
  /**
   * Extra matchers added to every selector, e.g. dashboard variables (`job=~"$job"`).
   * They come after the definition's own matchers.
   */
  readonly extraMatchers?: readonly LabelMatcher[];
  /** Replaces every range window, e.g. `$__rate_interval`; by default the definition's window is printed. */
  readonly windowOverride?: string;
  /**
   * Prints a node as the returned text instead of its expression, e.g. a signal as the series a recording
   * rule writes it to. The text is an atom: it is never parenthesised.
   */
  readonly replace?: (expr: Expr) => string | undefined;
  /**
   * The query language of the server that evaluates the text: `promql` (the default: Prometheus, Thanos, Mimir,
   * Cortex) or `metricsql` (VictoriaMetrics), where `rate` and `deriv` are written differently
   * (`renderMetricsQLRate`, `renderMetricsQLDeriv`), and `delta` and `increase` as MetricsQL's `delta_prometheus` and
   * `increase_prometheus`: from the window's own first sample, as Prometheus reads them, not from the sample before
   * the window (nor, for a counter born inside it, from zero).
   */
  readonly dialect?: QueryDialect;
};

export type QueryDialect = 'promql' | 'metricsql';

/** The φ of a quantile over time and its comma, as the function's first argument; empty for other functions. */
function paramPrefix(param: number | undefined): string {
  return param === undefined ? '' : `${formatNumber(param)}, `;
}

export function renderPromQL(expr: Expr, options: RenderOptions = {}): string {
  return render(expr, options);
}

function render(expr: Expr, options: RenderOptions): string {
  const replaced = options.replace?.(expr);
  if (replaced !== undefined) return replaced;
  switch (expr.kind) {
    case 'selector':
      return expr.metric + renderMatchers([...expr.matchers, ...(options.extraMatchers ?? [])]);
    case 'range': {
      const window = options.windowOverride ?? formatDuration(expr.windowMs);
      const inner = expr.metric + renderMatchers([...expr.matchers, ...(options.extraMatchers ?? [])]);
      const param = paramPrefix(expr.param);
      if (options.dialect === 'metricsql' && options.windowOverride === undefined) {
        if (expr.fn === 'rate') return renderMetricsQLRate(inner, expr.windowMs);
        if (expr.fn === 'deriv') return renderMetricsQLDeriv(`${inner}[${window}]`);
        if (expr.fn === 'delta' || expr.fn === 'increase') return `${expr.fn}_prometheus(${inner}[${window}])`;
      }
      return `${expr.fn}(${param}${inner}[${window}])`;
    }
    case 'subquery': {
      // A subquery's window is the definition's in every dialect: it is not a scrape-interval window to widen. It is
      // open at its start (expr.ts): a millisecond shorter, a closed range (Prometheus 2) reads the same steps as an
      // open one (Prometheus 3, MetricsQL), at any time but one a millisecond before a step.
      const window = formatDuration(expr.windowMs - 1);
      const range = `(${render(expr.expr, options)})[${window}:${formatDuration(expr.stepMs)}]`;
      const param = paramPrefix(expr.param);
      return options.dialect === 'metricsql' && expr.fn === 'deriv'
        ? renderMetricsQLDeriv(range)
        : `${expr.fn}(${param}${range})`;
    }
    case 'aggregate':
      return `${expr.op} ${expr.mode} (${expr.labels.join(', ')}) (${render(expr.expr, options)})`;
    case 'histogram_quantile':
      return `histogram_quantile(${formatNumber(expr.q)}, ${render(expr.expr, options)})`;
    case 'clamp_min':
      return `clamp_min(${render(expr.expr, options)}, ${formatNumber(expr.min)})`;
    case 'number':
    case 'threshold':
      return formatNumber(expr.value);
    case 'signal':
      return render(expr.expr, options);
    case 'binary': {
      const lhs = renderOperand(expr.lhs, options);
      const rhs = renderOperand(expr.rhs, options);
      return `${lhs} ${expr.op}${renderMatching(expr.matching)} ${rhs}`;
    }
  }
}

/**
 * `rate(sel[w])` for VictoriaMetrics, so its verdicts are Prometheus's where the two languages part: over a
 * series younger than the window.
 *
 * Prometheus divides a window's (extrapolated) increase by the whole window, so a series that began inside it
 * reads as if it had been flat before: the rate over the long window of a controller that started five minutes
 * ago is a third of its rate, and a rule that reads the long window waits for it to fill (WorkqueueSaturated
 * demands a quarter of an hour of load that way). MetricsQL's `rate` divides by the time its samples span, so
 * the same series reads its full rate from its second sample: a rule on the long window fires a quarter of an
 * hour early at every new pod (measured: WorkqueueSaturated since the first minute instead of the fourteenth).
 *
 * So the rate is scaled by the share of the window the series has existed, `(time() - first sample) / w`,
 * capped at 1, the first sample looked for over twice the window: any series that existed before the window
 * has a sample there (at any scrape interval up to the window), the factor is exactly 1 and the rate is
 * MetricsQL's own. Inside the window it is within half a scrape interval of Prometheus's extrapolation.
 */
function renderMetricsQLRate(selectorText: string, windowMs: number): string {
  const window = formatDuration(windowMs);
  const lookback = formatDuration(2 * windowMs);
  const seconds = formatNumber(windowMs / 1000);
  return `(rate(${selectorText}[${window}]) * clamp_max((time() - tfirst_over_time(${selectorText}[${lookback}])) / ${seconds}, 1))`;
}

/**
 * `deriv(sel[w])` (or of a subquery, `deriv((expr)[w:step])`) for VictoriaMetrics: only where the window holds two
 * samples or more, as in Prometheus, whose least-squares slope needs two points and is absent otherwise. MetricsQL
 * answers 0 over a single sample, so a series born in the last scrape of the window (a priority level a resync has
 * just opened) read as flat there and missing here.
 */
function renderMetricsQLDeriv(rangeText: string): string {
  return `(deriv(${rangeText}) and count_over_time(${rangeText}) > 1)`;
}

/** Binary operands are parenthesised unless they are atoms, so the tree's shape survives precedence rules. */
function renderOperand(expr: Expr, options: RenderOptions): string {
  const replaced = options.replace?.(expr);
  if (replaced !== undefined) return replaced;
  const text = render(expr, options);
  const shown = unwrapSignal(expr);
  return shown.kind === 'binary' || shown.kind === 'aggregate' ? `(${text})` : text;
}

/** What a signal node prints as: its expression. */
function unwrapSignal(expr: Expr): Expr {
  return expr.kind === 'signal' ? unwrapSignal(expr.expr) : expr;
}

function renderMatching(matching: VectorMatching | undefined): string {
  if (matching === undefined) return '';
  let text = '';
  if (matching.on !== undefined) text += ` on (${matching.on.join(', ')})`;
  else if (matching.ignoring !== undefined) text += ` ignoring (${matching.ignoring.join(', ')})`;
  // The empty label list keeps a parenthesised right-hand side from being read as the labels to copy.
  if (matching.groupLeft === true) text += ' group_left ()';
  return text;
}

/** Label matchers as PromQL writes them after a metric name: `{job=~"a.*", namespace="b"}`; empty for none. */
export function renderMatchers(matchers: readonly LabelMatcher[]): string {
  if (matchers.length === 0) return '';
  return `{${matchers.map((m) => `${m.label}${m.op}${JSON.stringify(m.value)}`).join(', ')}}`;
}

/** A PromQL number literal. */
export const formatNumber = formatFloat;
