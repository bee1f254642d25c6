/**
 * `promtool test rules` files built from recordings and their ground truth: the recordings become the test's
 * input series, and the alerts the truth expects at the end of the recordings become the assertions. The
 * expectations come from the truth only, never from what the rules produce, so the test checks the rules
 * against the scenario.
 *
 * One test may hold several recordings of distinct targets (`job`, `instance`), as one Prometheus scraping a fleet
 * holds them: the generated rules never aggregate across targets, so promtool evaluates the rules once for all of
 * them, and every assertion names its target.
 *
 * What is asserted, per alerting rule of the rule file, at the end of the recordings:
 * - no alert of that name fires outside the targets whose truth expects or allows it on some queue (one
 *   `promql_expr_test` on the `ALERTS` series, expecting none; with one recording and a rule expected and allowed
 *   nowhere: no alert of that name fires at all);
 * - on a target whose truth expects it on some queues and allows it on none: exactly those alerts fire, with the
 *   rule's severity and the queue's identity labels;
 * - on a target whose truth expects it on some queues and allows it on others: each expected alert fires (one
 *   `promql_expr_test` per queue counting its `ALERTS` series); the allowed queues may fire or not, so the whole
 *   set cannot be asserted exactly;
 * - allowed on a target and expected nowhere there: nothing more is asserted for that target.
 *
 * Firing alerts are asserted through `ALERTS{alertstate="firing"}` rather than `alert_rule_test` because
 * promtool compares an alert's annotations exactly, and the generated annotations hold measured values
 * (which depend on the rules' output, not on the truth). `ALERTS` carries the alert's labels only. Both see
 * the same thing: the firing alerts of the last rule evaluation at or before the evaluation time.
 *
 * The evaluation time is the recordings' last sample, relative to their first. promtool evaluates the rules
 * every `evaluation_interval` from 0 and loads input samples only up to each evaluation, so when the end is a
 * multiple of the interval (30 minutes of a 30 s group) the last evaluation sees every sample.
 *
 * Input series: every series of the recordings with its labels, one value per scrape step from each recording's
 * first sample on, `_` for a step without a sample, runs written with promtool's expanding
 * notation (`a+bxn`, `axn`, `_xn`) only where promtool's repeated addition gives back the recorded values
 * exactly.
 */
import { stringify } from 'yaml';
import type { RuleId, RuleScope, Severity } from '../diagnosis/rule.js';
import { escapeLabelValue, type Labels, seriesKey } from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { LABEL, PROMETHEUS_ALERTS } from '../metrics/names.js';
import type { GroundTruth, QueueTruth } from '../simulate/model.js';
import { formatDuration, parseDuration } from '../util/duration.js';

/** What the test needs to know of an alerting rule in the rule file. */
export type AlertRuleRef = { readonly id: RuleId; readonly severity: Severity; readonly scope: RuleScope };

export type PromtoolTestOptions = {
  /** The rule file as `rule_files` names it (relative paths are resolved from the test file's directory). */
  readonly rulesFile: string;
  /** The alerting rules in that file, in the order to assert them. */
  readonly rules: readonly AlertRuleRef[];
  /** The rule group's evaluation interval (`evaluation_interval`). */
  readonly evaluationIntervalMs: number;
  /** The scrape interval; default: inferred from the recording's timestamps. */
  readonly intervalMs?: number;
  /** Name of the test group; default `<scenario> (<flavor>)` of each recording, comma-separated. */
  readonly name?: string;
};

export type InputSeries = { readonly series: string; readonly values: string };
/** An expected alert: its labels (`alertname` excluded) and, when given, its annotations exactly. */
export type ExpectedAlert = {
  readonly exp_labels: Readonly<Record<string, string>>;
  readonly exp_annotations?: Readonly<Record<string, string>>;
};
export type AlertRuleTest = {
  readonly eval_time: string;
  readonly alertname: string;
  readonly exp_alerts: readonly ExpectedAlert[];
};
export type PromqlExprTest = {
  readonly expr: string;
  readonly eval_time: string;
  readonly exp_samples: ReadonlyArray<{ readonly labels: string; readonly value: number }>;
};
export type PromtoolTestGroup = {
  readonly name: string;
  readonly interval: string;
  readonly input_series: readonly InputSeries[];
  readonly alert_rule_test?: readonly AlertRuleTest[];
  readonly promql_expr_test?: readonly PromqlExprTest[];
};
export type PromtoolTestFile = {
  readonly rule_files: readonly string[];
  readonly evaluation_interval: string;
  readonly tests: readonly PromtoolTestGroup[];
};

/**
 * How each rule is checked against a truth: `none` (must not fire), `exact` (exactly the expected alerts
 * fire), `present` (each expected alert fires; others allowed), `unchecked` (only allowed somewhere).
 */
export type AlertCheck =
  | { readonly rule: AlertRuleRef; readonly kind: 'none' }
  | { readonly rule: AlertRuleRef; readonly kind: 'exact' | 'present'; readonly alerts: readonly AlertLabels[] }
  | { readonly rule: AlertRuleRef; readonly kind: 'unchecked' };
/** The labels of an expected alert, `alertname` excluded (as `exp_labels` writes them). */
export type AlertLabels = Readonly<Record<string, string>>;

export class PromtoolTestError extends Error {
  override readonly name = 'PromtoolTestError';
}

/** The check for every rule, in the order of `rules`. Throws when the truth expects a rule not in the list. */
export function alertChecks(truth: GroundTruth, rules: readonly AlertRuleRef[]): AlertCheck[] {
  const known = new Set<string>(rules.map((r) => r.id));
  for (const q of truth.queues) {
    for (const id of q.expected) {
      if (!known.has(id)) throw new PromtoolTestError(`the truth expects ${id}, which is not in the rule file`);
    }
  }
  return rules.map((rule): AlertCheck => {
    const expectedOn = truth.queues.filter((q) => q.expected.includes(rule.id));
    const allowedOn = truth.queues.filter((q) => q.allowed.includes(rule.id) && !q.expected.includes(rule.id));
    if (expectedOn.length === 0) return allowedOn.length === 0 ? { rule, kind: 'none' } : { rule, kind: 'unchecked' };
    return {
      rule,
      kind: allowedOn.length === 0 ? 'exact' : 'present',
      alerts: expectedOn.map((q) => alertLabels(truth, q, rule)),
    };
  });
}

/** The labels an alert of `rule` carries for queue `q`: severity, the target, and the queue when the rule is per queue. */
export function alertLabels(truth: GroundTruth, q: QueueTruth, rule: AlertRuleRef): AlertLabels {
  return {
    [LABEL.severity]: rule.severity,
    [LABEL.job]: truth.job,
    [LABEL.instance]: truth.instance,
    ...(rule.scope === 'queue' && q.name !== null ? { [LABEL.name]: q.name } : {}),
    ...(rule.scope === 'queue' && q.controller !== null ? { [LABEL.controller]: q.controller } : {}),
  };
}

/** A recording and its ground truth: one target of a promtool test. */
export type RecordedTarget = { readonly page: ParsedPage; readonly truth: GroundTruth };

/** The promtool test file for a parsed recording and its truth. */
export function promtoolRuleTest(page: ParsedPage, truth: GroundTruth, options: PromtoolTestOptions): PromtoolTestFile {
  return promtoolFleetTest([{ page, truth }], options);
}

/**
 * The promtool test file for several recordings at once, each of its own target (throws when two name the same
 * `job` and `instance`); they must share the scrape interval and length, so that one evaluation time ends them all.
 */
export function promtoolFleetTest(targets: readonly RecordedTarget[], options: PromtoolTestOptions): PromtoolTestFile {
  if (targets.length === 0) throw new PromtoolTestError('a promtool test needs at least one recording');
  const seen = new Set<string>();
  for (const { truth } of targets) {
    const target = targetSelector(truth);
    if (seen.has(target)) throw new PromtoolTestError(`two recordings of the target ${target}`);
    seen.add(target);
  }
  const inputs = targets.map(({ page, truth }) => {
    const nominal = truth.parameters.scrapeInterval === '' ? undefined : parseDuration(truth.parameters.scrapeInterval);
    return inputSeries(page, options.intervalMs ?? nominal);
  });
  const first = inputs[0] as (typeof inputs)[number];
  for (const [i, input] of inputs.entries()) {
    if (input.intervalMs !== first.intervalMs || input.endMs !== first.endMs) {
      throw new PromtoolTestError(
        `${targetSelector((targets[i] as RecordedTarget).truth)} is scraped every ${formatDuration(input.intervalMs)} for ${formatDuration(input.endMs)}, ` +
          `${targetSelector((targets[0] as RecordedTarget).truth)} every ${formatDuration(first.intervalMs)} for ${formatDuration(first.endMs)}: one test needs one grid`,
      );
    }
  }
  const evalTime = formatDuration(first.endMs);
  const checks = targets.map(({ truth }) => alertChecks(truth, options.rules));
  const exprTests: PromqlExprTest[] = [];
  for (const [r, rule] of options.rules.entries()) {
    const owners = targets.filter((_, t) => checks[t]?.[r]?.kind !== 'none');
    const stray =
      owners.length === 0
        ? firingAlerts(rule.id)
        : `${firingAlerts(rule.id)} unless (${owners.map(({ truth }) => firingAlerts(rule.id, targetMatchers(truth))).join(' or ')})`;
    exprTests.push({ expr: stray, eval_time: evalTime, exp_samples: [] });
    for (const [t, { truth }] of targets.entries()) {
      const check = checks[t]?.[r];
      if (check?.kind === 'exact') {
        exprTests.push({
          expr: firingAlerts(rule.id, targetMatchers(truth)),
          eval_time: evalTime,
          exp_samples: check.alerts.map((labels) => ({ labels: alertsSeries(rule.id, labels), value: 1 })),
        });
      } else if (check?.kind === 'present') {
        for (const labels of check.alerts) {
          exprTests.push({
            expr: `count(${firingAlerts(rule.id, identityMatchers(rule, labels))})`,
            eval_time: evalTime,
            exp_samples: [{ labels: '{}', value: 1 }],
          });
        }
      }
    }
  }
  const only = targets.length === 1 ? (targets[0] as RecordedTarget).truth : undefined;
  return {
    rule_files: [options.rulesFile],
    evaluation_interval: formatDuration(options.evaluationIntervalMs),
    tests: [
      {
        name:
          options.name ??
          (only !== undefined
            ? `${only.scenario} (${only.flavor})`
            : targets.map(({ truth }) => `${truth.scenario} (${truth.flavor})`).join(', ')),
        interval: formatDuration(first.intervalMs),
        input_series: inputs.flatMap((input) => input.series),
        promql_expr_test: exprTests,
      },
    ],
  };
}

/** The test file as YAML, optionally under a comment line. */
export function promtoolTestYaml(file: PromtoolTestFile, comment?: string): string {
  const body = stringify(file, { lineWidth: 0 });
  return comment === undefined ? body : `# ${comment}\n${body}`;
}

/** `ALERTS{alertname="…", alertstate="firing"}`, with extra matchers. */
function firingAlerts(id: RuleId, extra: readonly string[] = []): string {
  const matchers = [
    `${PROMETHEUS_ALERTS.alertNameLabel}="${id}"`,
    `${PROMETHEUS_ALERTS.alertStateLabel}="${PROMETHEUS_ALERTS.firing}"`,
    ...extra,
  ];
  return `${PROMETHEUS_ALERTS.series}{${matchers.join(', ')}}`;
}

/** Matchers selecting a target's series: its `job` and `instance`. */
function targetMatchers(truth: GroundTruth): string[] {
  return [`${LABEL.job}="${escapeLabelValue(truth.job)}"`, `${LABEL.instance}="${escapeLabelValue(truth.instance)}"`];
}

/** A target as a selector, `{job="…", instance="…"}`: how errors name it. */
function targetSelector(truth: GroundTruth): string {
  return `{${targetMatchers(truth).join(', ')}}`;
}

/** The `ALERTS` series of a firing alert with these labels. */
function alertsSeries(id: RuleId, labels: AlertLabels): string {
  return seriesKey(PROMETHEUS_ALERTS.series, {
    ...labels,
    [PROMETHEUS_ALERTS.alertNameLabel]: id,
    [PROMETHEUS_ALERTS.alertStateLabel]: PROMETHEUS_ALERTS.firing,
  });
}

/** Matchers selecting exactly one queue's (or target's) alert: identity labels it lacks must be empty. */
function identityMatchers(rule: AlertRuleRef, labels: AlertLabels): string[] {
  const identity =
    rule.scope === 'queue' ? [LABEL.job, LABEL.instance, LABEL.name, LABEL.controller] : [LABEL.job, LABEL.instance];
  return [LABEL.severity, ...identity].map((l) => `${l}="${escapeLabelValue(labels[l] ?? '')}"`);
}

/**
 * The recording as promtool input series, with the scrape interval and the last sample's offset. promtool's
 * series are on a fixed grid; given the nominal scrape interval, each sample goes to the nearest slot (a real
 * scrape's start drifts by a second or so around its slot), and two samples of one series in one slot are
 * an error. Without it the grid is inferred from the timestamps and every sample must lie on it exactly.
 */
export function inputSeries(
  page: ParsedPage,
  intervalMs?: number,
): { series: InputSeries[]; intervalMs: number; endMs: number } {
  const grid = seriesGrid(page, intervalMs);
  return {
    series: gridInputSeries(grid.series),
    intervalMs: grid.intervalMs,
    endMs: grid.endMs,
  };
}

/** Series on the grid as promtool's `input_series`. */
export function gridInputSeries(series: readonly GridSeries[]): InputSeries[] {
  return series.map((s) => ({ series: seriesKey(s.name, s.labels), values: seriesValues(s.values) }));
}

/** One series on promtool's grid: its value at each step (undefined for none), trailing steps left out. */
export type GridSeries = {
  readonly name: string;
  readonly labels: Labels;
  readonly values: readonly (number | undefined)[];
};

/**
 * The recording's series on promtool's grid (see `inputSeries`), in page order; `keep` selects series by
 * sample name.
 */
export function seriesGrid(
  page: ParsedPage,
  intervalMs?: number,
  keep: (name: string) => boolean = () => true,
): { series: GridSeries[]; intervalMs: number; endMs: number } {
  const { count, series: ids, values, timestamps } = page.samples;
  if (count === 0) throw new PromtoolTestError('the recording has no samples');
  let startMs = Number.POSITIVE_INFINITY;
  let lastMs = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    const t = timestamps[i] as number;
    if (Number.isNaN(t)) throw new PromtoolTestError('every sample of a recording needs a timestamp');
    if (t < startMs) startMs = t;
    if (t > lastMs) lastMs = t;
  }
  let step = intervalMs ?? 0;
  if (intervalMs === undefined) {
    for (let i = 0; i < count; i++) step = gcd(step, (timestamps[i] as number) - startMs);
    if (step === 0) step = 1000;
  }
  if (!(step > 0) || !Number.isInteger(step)) throw new PromtoolTestError(`bad scrape interval ${step} ms`);
  const steps = (lastMs - startMs) / step + 1;
  if (steps > MAX_STEPS) {
    throw new PromtoolTestError(
      `the samples are not on a regular scrape grid (${formatDuration(step)} steps over ${formatDuration(lastMs - startMs)})`,
    );
  }

  const perSeries: (number | undefined)[][] = [];
  const snap = intervalMs !== undefined;
  for (let i = 0; i < count; i++) {
    const id = ids[i] as number;
    const offset = (timestamps[i] as number) - startMs;
    const at = snap ? Math.round(offset / step) : offset / step;
    if (!Number.isInteger(at)) {
      throw new PromtoolTestError(
        `sample of ${page.series.key(id)} at +${offset} ms is off the ${formatDuration(step)} scrape grid`,
      );
    }
    let row = perSeries[id];
    if (row === undefined) {
      row = [];
      perSeries[id] = row;
    }
    const previous = row[at];
    if (previous !== undefined && !sameValue(previous, values[i] as number)) {
      throw new PromtoolTestError(`${page.series.key(id)} has two values at +${offset} ms`);
    }
    row[at] = values[i] as number;
  }
  const out: GridSeries[] = [];
  for (let id = 0; id < page.series.count; id++) {
    const row = perSeries[id];
    if (row === undefined || !keep(page.series.name(id))) continue;
    out.push({ name: page.series.name(id), labels: page.series.labels(id), values: row });
  }
  const endMs = snap ? Math.round((lastMs - startMs) / step) * step : lastMs - startMs;
  return { series: out, intervalMs: step, endMs };
}

/** More steps than this means the timestamps are not a scrape grid (jitter): refuse rather than write `_` for ever. */
const MAX_STEPS = 1_000_000;

/**
 * One series' values in promtool notation: `_` / `_xn` for missing steps (`_xn` is n steps), `axn` for n+1
 * equal values, `a+bxn` / `a-bxn` for n+1 values promtool builds by adding b n times (when it gives back the
 * recorded values exactly), plain values otherwise.
 * Trailing missing steps are left out.
 */
export function seriesValues(row: readonly (number | undefined)[]): string {
  const tokens: string[] = [];
  let i = 0;
  while (i < row.length) {
    const v = row[i];
    if (v === undefined) {
      let j = i;
      while (j < row.length && row[j] === undefined) j++;
      if (j === row.length) break;
      const n = j - i;
      tokens.push(n === 1 ? '_' : `_x${n}`);
      i = j;
      continue;
    }
    const run = arithmeticRun(row, i);
    // A constant run from three values on, a changing one from four (`0 1 2` reads better than `0+1x2`).
    if (run.n >= (run.delta === 0 ? 2 : 3)) {
      tokens.push(
        run.delta === 0 ? `${formatValue(v)}x${run.n}` : `${formatValue(v)}${formatDelta(run.delta)}x${run.n}`,
      );
      i += run.n + 1;
    } else {
      tokens.push(formatValue(v));
      i += 1;
    }
  }
  return tokens.join(' ');
}

/** The longest run from `i` that promtool's `a+bxn` reproduces exactly (repeated float64 addition). */
function arithmeticRun(row: readonly (number | undefined)[], i: number): { n: number; delta: number } {
  const a = row[i] as number;
  const next = row[i + 1];
  if (!Number.isFinite(a) || next === undefined || !Number.isFinite(next)) return { n: 0, delta: 0 };
  const delta = next - a;
  if (!Number.isFinite(delta)) return { n: 0, delta: 0 };
  let acc = a;
  let n = 0;
  for (let k = i + 1; k < row.length; k++) {
    acc += delta;
    if (row[k] !== acc) break;
    n++;
  }
  return { n, delta };
}

/** A float as promtool reads it back exactly: shortest round-trip digits, `NaN`, `Inf`, `-Inf`. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return 'Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

function formatDelta(delta: number): string {
  return delta < 0 ? `-${formatValue(-delta)}` : `+${formatValue(delta)}`;
}

function sameValue(a: number, b: number): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

function gcd(a: number, b: number): number {
  let x = Math.abs(a);
  let y = Math.abs(b);
  while (y !== 0) [x, y] = [y, x % y];
  return x;
}
