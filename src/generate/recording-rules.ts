/**
 * The recording rules behind the generated alerts, named in Prometheus' `level:metric:operations` convention:
 *
 * - one per signal the service reports (every signal an alert reads, in its condition or as evidence, and the
 *   rest of each queue's report), e.g. `queue:workqueue_adds:rate5m`,
 *   `controller:controller_runtime_reconcile_errors:rate15m`, `process:rest_client_requests_writes:rate5m`: a
 *   service in Prometheus mode then reads every signal from one recorded series per queue. The
 *   level is the signal's identity scope, the metric its metric (with `_total` dropped under `rate`, and a
 *   word for each of its label matchers), the operations what the signal computes of it, newest first. A
 *   signal that is a metric as exposed (no operation) is read directly and not recorded;
 * - where an alert expression written over the signals' series would still be 300 characters or more, its
 *   largest sub-conditions, as `<level>:<alert>:part<n>` (e.g. `queue:workqueue_hot_loop:part1`), until it
 *   is shorter. They carry the thresholds they compare with: the same configuration generates them.
 *
 * The alert expressions are the conditions rendered with each signal node, and each recorded sub-condition,
 * printed as the series it is recorded to; the fleet selector goes into every raw selector, so the recorded
 * series and the alerts read only the selected targets. Recording rules come first in the alerts' group:
 * Prometheus runs a group's rules in order at one evaluation time, so every alert reads recordings of the
 * same evaluation and fires exactly when its expression written in full would.
 *
 * The `queues:` section of the configuration (queue-cells.ts): a rule whose thresholds, `for` or state some
 * entries change gets one alert per cell of queues, each the condition with the cell's settings and the cell's
 * `name`/`controller` matchers on every series that carries those labels (queue-level series carry both,
 * controller-level ones `controller`); silenced and disabled cells get none. Sub-conditions recorded for a
 * cell's own thresholds are named `<level>:<alert>_queues<n>:part<m>`.
 */
import type { RuleOverrides } from '../diagnosis/catalog.js';
import { type IdentityScope, labelsBeyond, withPlacementLabels } from '../diagnosis/identity.js';
import { REPORTED_SIGNALS, SIGNALS, type SignalDefinition, type SignalId } from '../diagnosis/signals.js';
import {
  CONFLICT_CODE,
  LABEL,
  NEGATIVE_PRIORITY_PATTERN,
  NON_NEGATIVE_PRIORITY_PATTERN,
  SUFFIX,
  WORKQUEUE,
  WRITE_METHODS,
} from '../metrics/names.js';
import type { RecordedSignal } from '../prometheus/recorded-series.js';
import { childrenOf, type Expr, type LabelMatcher, selector as selectorExpr } from '../promql/expr.js';
import { narrowed } from '../promql/narrowed.js';
import { formatDuration, renderPromQL } from '../promql/render.js';
import { analyseRule, type RuleAnalysis, signalsIn } from './condition-analysis.js';
import { identityOptions, type QueryScope } from './query-scope.js';
import { queueCells } from './queue-cells.js';

/** Alert expressions, and recorded sub-conditions, are kept shorter than this many characters. */
export const EXPRESSION_LIMIT = 300;

/** A recorded series name: `level:metric:operations`. */
export const RECORDING_NAME_PATTERN = /^[a-z]+:[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$/;

export type RecordingRule = { readonly record: string; readonly expr: string };

// ---- signal names ----

/** Words for the label matchers of the signal definitions; an unknown matcher is an error, not a guess. */
const MATCHER_WORDS: ReadonlyArray<{ readonly matcher: LabelMatcher; readonly word: string }> = [
  { matcher: { label: LABEL.method, op: '=~', value: WRITE_METHODS.join('|') }, word: 'writes' },
  { matcher: { label: LABEL.code, op: '!~', value: '2..' }, word: 'failed' },
  { matcher: { label: LABEL.code, op: '=', value: CONFLICT_CODE }, word: 'conflicts' },
  { matcher: { label: LABEL.code, op: '!~', value: `2..|${CONFLICT_CODE}` }, word: 'rejected' },
  { matcher: { label: LABEL.priority, op: '=~', value: NEGATIVE_PRIORITY_PATTERN }, word: 'low_priority' },
  { matcher: { label: LABEL.priority, op: '=~', value: NON_NEGATIVE_PRIORITY_PATTERN }, word: 'normal_priority' },
];

/**
 * Signals whose expression combines several series in a way the derivation below does not read (a ratio
 * of different metrics): their metric and operations, named here once.
 */
const COMPOSITE_SIGNAL_NAMES: Readonly<Partial<Record<SignalId, { metric: string; operations: string }>>> = {
  slowSyncShare: { metric: 'workqueue_work_duration_seconds_over_10s', operations: 'ratio_rate15m' },
  slowSyncRate: { metric: 'workqueue_work_duration_seconds_over_10s', operations: 'rate15m' },
  sustainedOfferedWorkers: { metric: 'workqueue_offered_workers', operations: 'rate15m' },
  errorRatio: { metric: 'controller_runtime_reconcile_errors_unexplained', operations: 'ratio_rate5m' },
  sustainedErrorRatio: { metric: 'controller_runtime_reconcile_errors_unexplained', operations: 'ratio_rate15m' },
  recentErrorShareOfSustained: {
    metric: 'controller_runtime_reconcile_errors_unexplained',
    operations: 'rate5m_per_reconcile_rate15m',
  },
  requeuedErrorRate: { metric: 'controller_runtime_reconcile_errors_requeued', operations: 'rate5m' },
  unexplainedErrorRate: { metric: 'controller_runtime_reconcile_errors_unexplained', operations: 'rate5m' },
  sustainedUnexplainedErrorRate: { metric: 'controller_runtime_reconcile_errors_unexplained', operations: 'rate15m' },
  steadyUnexplainedErrorRate: { metric: 'controller_runtime_reconcile_errors_unexplained', operations: 'rate20m' },
  // The minute's floor, over two minutes where the minute holds no scrape: the names they always had.
  depthFloor: { metric: WORKQUEUE.depth, operations: 'min_over_time1m' },
  normalPriorityDepthFloor: { metric: 'workqueue_depth_normal_priority', operations: 'min_over_time1m' },
  // The long window's floor, recorded only once its samples span the window: the name it always had.
  sustainedDepthMin: { metric: WORKQUEUE.depth, operations: 'min_over_time15m' },
  // The trend window's floor, recorded only for a series older than the window.
  trendDepthMin: { metric: WORKQUEUE.depth, operations: 'min_over_time10m' },
  // The slopes of the whole depth (a subquery over the summed priorities): the names they always had.
  depthSlope: { metric: WORKQUEUE.depth, operations: 'deriv10m' },
  recentDepthSlope: { metric: WORKQUEUE.depth, operations: 'deriv5m' },
  depthTrend: { metric: WORKQUEUE.depth, operations: 'deriv30m' },
  // The half hour's net change of the depth per sync completed in it.
  depthChangePerSync: { metric: WORKQUEUE.depth, operations: 'delta_per_sync30m' },
  servedFirstDepthMin: { metric: 'workqueue_depth_served_first', operations: 'min_over_time5m' },
  servedFirstDepthAvg: { metric: 'workqueue_depth_served_first', operations: 'avg_over_time5m' },
  servedFirstDepthMedian: { metric: 'workqueue_depth_served_first', operations: 'p50_over_time5m' },
  unknownPriorityDepthSeries: { metric: 'workqueue_depth_unknown_priority', operations: 'count' },
};

function matcherWord(m: LabelMatcher, signalId: string): string {
  if (m.label === LABEL.result && m.op === '=') return m.value.replace(/[^a-z0-9]+/g, '_');
  const found = MATCHER_WORDS.find(
    (w) => w.matcher.label === m.label && w.matcher.op === m.op && w.matcher.value === m.value,
  );
  if (found === undefined) throw new Error(`signal ${signalId}: no word for the matcher ${m.label}${m.op}"${m.value}"`);
  return found.word;
}

function withWords(metric: string, matchers: readonly LabelMatcher[], signalId: string): string {
  return [metric, ...matchers.map((m) => matcherWord(m, signalId))].join('_');
}

/** `quantile_over_time(φ, …)` as histogram quantiles are named: `p50_over_time` (its window follows). */
function quantileOverTimeName(phi: number): string {
  return `p${Math.round(phi * 100)}_over_time`;
}

/** `metric[window]` under `fn`: the metric part (`_total` dropped under rate and increase) and the operation. */
function rangeName(e: Extract<Expr, { kind: 'range' }>, signalId: string): { metric: string; operations: string } {
  const counter = e.fn === 'rate' || e.fn === 'increase';
  const metric = counter && e.metric.endsWith('_total') ? e.metric.slice(0, -'_total'.length) : e.metric;
  const fn = e.param === undefined ? e.fn : quantileOverTimeName(e.param);
  return { metric: withWords(metric, e.matchers, signalId), operations: `${fn}${formatDuration(e.windowMs)}` };
}

/** `sum without (...) (x)` is how a signal reaches its level: the level names it, so it is looked through. */
function throughSum(e: Expr): { inner: Expr; summed: boolean } {
  return e.kind === 'aggregate' && e.op === 'sum' && e.mode === 'without'
    ? { inner: throughSum(e.expr).inner, summed: true }
    : { inner: e, summed: false };
}

/** The metric and operations of a signal, or undefined for a metric read as exposed. */
function signalNameParts(s: SignalDefinition): { metric: string; operations: string } | undefined {
  return COMPOSITE_SIGNAL_NAMES[s.id as SignalId] ?? exprNameParts(s.expr, s.id);
}

/** The metric and operations of a signal's expression `e`, or undefined for a metric read as exposed. */
function exprNameParts(e: Expr, signalId: string): { metric: string; operations: string } | undefined {
  // REST client rates: `matching or (all * 0)`, the zero for a process that makes no such request.
  if (e.kind === 'binary' && e.op === 'or' && e.rhs.kind === 'binary' && e.rhs.op === '*') e = e.lhs;
  // Per-priority views: `view unless (queues with depth of unknown priority)`, named by the view.
  if (e.kind === 'binary' && e.op === 'unless') e = e.lhs;
  const summedPart = throughSum(e);
  const { summed } = summedPart;
  // A rate read only once its samples span its window (`rate and span test`) is named by its rate.
  const inner =
    summedPart.inner.kind === 'binary' && summedPart.inner.op === 'and' && summedPart.inner.lhs.kind === 'range'
      ? summedPart.inner.lhs
      : summedPart.inner;
  if (inner.kind === 'selector') {
    return summed ? { metric: withWords(inner.metric, inner.matchers, signalId), operations: 'sum' } : undefined;
  }
  if (inner.kind === 'range') return rangeName(inner, signalId);
  // A quantile over a subquery of a rate (the median of two-minute rates): `p50_over_time5m_rate2m`.
  if (inner.kind === 'subquery' && inner.param !== undefined) {
    const parts = exprNameParts(inner.expr, signalId);
    if (parts !== undefined) {
      const fn = `${quantileOverTimeName(inner.param)}${formatDuration(inner.windowMs)}`;
      return { metric: parts.metric, operations: `${fn}_${parts.operations}` };
    }
  }
  if (inner.kind === 'histogram_quantile') {
    const { inner: rate } = throughSum(inner.expr);
    if (rate.kind === 'range' && rate.metric.endsWith(SUFFIX.bucket)) {
      const parts = rangeName({ ...rate, metric: rate.metric.slice(0, -SUFFIX.bucket.length) }, signalId);
      return { metric: parts.metric, operations: `p${Math.round(inner.q * 100)}_${parts.operations}` };
    }
  }
  if (inner.kind === 'binary' && inner.op === '/') {
    // A histogram's mean: rate of its sum over rate of its count.
    const sum = throughSum(inner.lhs).inner;
    const count = throughSum(inner.rhs).inner;
    if (
      sum.kind === 'range' &&
      count.kind === 'range' &&
      sum.fn === 'rate' &&
      count.fn === 'rate' &&
      sum.windowMs === count.windowMs &&
      sum.metric.endsWith(SUFFIX.sum) &&
      count.metric === sum.metric.slice(0, -SUFFIX.sum.length) + SUFFIX.count
    ) {
      return { metric: sum.metric.slice(0, -SUFFIX.sum.length), operations: `mean${formatDuration(sum.windowMs)}` };
    }
  }
  throw new Error(`signal ${signalId}: no recording name for its expression; name it in COMPOSITE_SIGNAL_NAMES`);
}

/** The series a signal is recorded to, `level:metric:operations`; undefined for a metric read as exposed. */
export function recordedName(s: SignalDefinition): string | undefined {
  const parts = signalNameParts(s);
  return parts === undefined ? undefined : `${s.scope}:${parts.metric}:${parts.operations}`;
}

// ---- the plan ----

/** One alerting rule of the plan: a rule's condition with the settings of some queues (all, without `queues:`). */
export type PlannedAlert = {
  /** The analysis of the rule with the settings in force for the queues of `matchers`. */
  readonly analysis: RuleAnalysis;
  /** The queue matchers (`name`, `controller`) of the cell; none: every queue. */
  readonly matchers: readonly LabelMatcher[];
  /** The expression, over the recorded series. */
  readonly expr: string;
};

export type RecordingPlan = {
  /** The recording rules, each after every rule it reads. */
  readonly rules: readonly RecordingRule[];
  /** The alerting rules, in the order of the analyses: per rule, its cells of queues (queue-cells.ts). */
  readonly alerts: readonly PlannedAlert[];
  /** The series a signal is recorded to, when it is. */
  readonly seriesOf: (signalId: string) => string | undefined;
  /** The expression a signal's recording rule evaluates (selector applied), when it is recorded. */
  readonly recordedFrom: (signalId: string) => Expr | undefined;
};

/** Rule id in snake case: `WorkqueueHotLoop` → `workqueue_hot_loop`. */
function snakeCase(id: string): string {
  return id.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The scope of the series a (sub-)condition returns: that of its left-most signal. */
function outputScope(e: Expr): string | undefined {
  if (e.kind === 'signal') return SIGNALS.find((s) => s.id === e.id)?.scope;
  const first = childrenOf(e)[0];
  return first === undefined ? undefined : outputScope(first);
}

/** The operands of `e` to record first: a chain of one set operation (`a or b or c`) counts as one level. */
function operands(e: Expr): Expr[] {
  if (e.kind !== 'binary') return childrenOf(e);
  if (e.matching !== undefined || (e.op !== 'and' && e.op !== 'or')) return [e.lhs, e.rhs];
  const chain = (x: Expr): Expr[] =>
    x.kind === 'binary' && x.op === e.op && x.matching === undefined ? [...chain(x.lhs), ...chain(x.rhs)] : [x];
  return [...chain(e.lhs), ...chain(e.rhs)];
}

/** The series of `scope` carry these of the queue matchers' labels. */
function queueLabelsOf(scope: string | undefined): readonly string[] {
  return scope === undefined ? [] : labelsBeyond(scope as IdentityScope, 'process');
}

export function recordingPlan(
  analyses: readonly RuleAnalysis[],
  scope: QueryScope = {},
  overrides: RuleOverrides = {},
): RecordingPlan {
  const selector = scope.selector ?? [];
  const identity = identityOptions(scope);

  // Every signal an alert reads, and every reported one (Prometheus mode reads them all each evaluation).
  const used = new Set<string>(REPORTED_SIGNALS.map((s) => s.id));
  for (const a of analyses) {
    for (const id of signalsIn(a.condition)) used.add(id);
    for (const id of a.settings.rule.evidence) used.add(id);
  }
  const signalSeries = new Map<string, string>();
  const signalExprs = new Map<string, Expr>();
  const rules: RecordingRule[] = [];
  for (const s of SIGNALS) {
    if (!used.has(s.id)) continue;
    const name = recordedName(s);
    if (name === undefined) continue;
    signalSeries.set(s.id, name);
    const recorded = narrowed(withPlacementLabels(s.expr, identity), selector);
    signalExprs.set(s.id, recorded);
    rules.push({ record: name, expr: renderPromQL(recorded) });
  }

  const conditions = new Map<RuleAnalysis, Expr>();
  const partSeries = new Map<Expr, string>();
  /** The output scope of each recorded sub-condition. */
  const partScope = new Map<string, string | undefined>();
  const replace = (e: Expr): string | undefined =>
    partSeries.get(e) ?? (e.kind === 'signal' ? signalSeries.get(e.id) : undefined);
  const render = (e: Expr): string => renderPromQL(e, { extraMatchers: selector, replace });
  /** `e` rendered for the queues of `matchers`: each on every series that carries its label. */
  const renderFor = (e: Expr, matchers: readonly LabelMatcher[]): string => {
    if (matchers.length === 0) return render(e);
    const on = (level: string | undefined) => matchers.filter((m) => queueLabelsOf(level).includes(m.label));
    return renderPromQL(e, {
      extraMatchers: selector,
      replace: (node) => {
        const part = partSeries.get(node);
        if (part !== undefined) return renderPromQL(selectorExpr(part, on(partScope.get(part))));
        if (node.kind !== 'signal') return undefined;
        const level = SIGNALS.find((s) => s.id === node.id)?.scope;
        const recorded = signalSeries.get(node.id);
        if (recorded !== undefined) return renderPromQL(selectorExpr(recorded, on(level)));
        // A metric read as exposed: a selector, an atom.
        return renderPromQL(node.expr, { extraMatchers: [...selector, ...on(level)] });
      },
    });
  };

  /**
   * The condition of `a` with placement labels, its sub-conditions recorded until it renders shorter than the
   * limit (once per analysis: the cells with the same settings share them).
   */
  const shortened = (a: RuleAnalysis, suffix: string): Expr => {
    const known = conditions.get(a);
    if (known !== undefined) return known;
    const { rule } = a.settings;
    let parts = 0;
    /**
     * Makes `e` render shorter than the limit: its largest operand is made to fit first, then recorded when
     * `e` is still too long, and so on.
     */
    const shorten = (e: Expr): void => {
      if (render(e).length < EXPRESSION_LIMIT) return;
      const candidates = operands(e)
        .filter((o) => replace(o) === undefined && childrenOf(o).length > 0)
        .sort((x, y) => render(y).length - render(x).length);
      for (const candidate of candidates) {
        shorten(candidate);
        if (render(e).length < EXPRESSION_LIMIT) return;
        parts += 1;
        const level = outputScope(candidate) ?? (rule.scope === 'queue' ? 'queue' : 'process');
        const name = `${level}:${snakeCase(rule.id)}${suffix}:part${parts}`;
        rules.push({ record: name, expr: render(candidate) });
        partSeries.set(candidate, name);
        partScope.set(name, level);
        if (render(e).length < EXPRESSION_LIMIT) return;
      }
      throw new Error(`${rule.id}: the alert expression cannot be made shorter than ${EXPRESSION_LIMIT} characters`);
    };
    const condition = withPlacementLabels(a.condition, identity);
    shorten(condition);
    conditions.set(a, condition);
    return condition;
  };

  const alerts: PlannedAlert[] = [];
  for (const a of analyses) {
    /** Analyses by the settings they were made with, in order: the rule-wide first. */
    const variants: RuleAnalysis[] = [a];
    for (const cell of queueCells(a.settings.rule.id, overrides)) {
      if (cell.silenced || !cell.settings.enabled) continue;
      let variant = variants.find((v) => sameSettings(v, cell.settings));
      if (variant === undefined) {
        variant = analyseRule(cell.settings);
        variants.push(variant);
      }
      const index = variants.indexOf(variant);
      const condition = shortened(variant, index === 0 ? '' : `_queues${index}`);
      alerts.push({ analysis: variant, matchers: cell.matchers, expr: renderFor(condition, cell.matchers) });
    }
  }

  return { rules, alerts, seriesOf: (id) => signalSeries.get(id), recordedFrom: (id) => signalExprs.get(id) };
}

/**
 * The signals the plan records, by id, each with the series it is recorded to and the signal's definition (what
 * that series holds before the fleet selector): what Prometheus mode reads in their place (recorded-series.ts).
 */
export function recordedSignals(plan: RecordingPlan): ReadonlyMap<string, RecordedSignal> {
  const signals = new Map<string, RecordedSignal>();
  for (const s of SIGNALS) {
    const series = plan.seriesOf(s.id);
    if (series !== undefined) signals.set(s.id, { series, expr: s.expr });
  }
  return signals;
}

/** Whether an analysis was made with these settings. */
function sameSettings(a: RuleAnalysis, settings: RuleAnalysis['settings']): boolean {
  const mine = a.settings;
  return (
    mine.forMs === settings.forMs &&
    mine.enabled === settings.enabled &&
    Object.keys(settings.thresholds).every((k) => mine.thresholds[k] === settings.thresholds[k])
  );
}
