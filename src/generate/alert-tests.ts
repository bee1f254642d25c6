/**
 * The promtool unit tests `generate` writes beside the alert rules (`alerts/tests/<Alert>.yaml`): for each
 * alert, the series of a simulated scenario where it must fire and of one where it must not, and what
 * Prometheus must do at the end of each recording.
 *
 * - Where it fires: every queue the scenario's ground truth expects it on fires, with exactly the alert's
 *   labels and annotations. The annotations are rendered here (`annotation-render.ts`) over the same series
 *   with the project's PromQL evaluator, so a test fails when Prometheus prints anything else.
 * - Where it must not: no alert of that name.
 *
 * Which alerts fire comes from the ground truth, never from the rules: with changed thresholds the tests
 * say whether the rules still catch the simulated fault and still leave the near miss alone.
 *
 * Small and deterministic: fixed seeds, 30 s scrapes, recordings as long as the scenario's fault takes to
 * hold the condition plus the alert's `for`, and only the series of the metrics the alert reads (its condition and its
 * evidence).
 */
import { stringify } from 'yaml';
import type { RuleId } from '../diagnosis/rule.js';
import { MINUTE_MS, signal } from '../diagnosis/signals.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { parseExposition } from '../exposition/parser.js';
import type { SubtreeMemo } from '../promql/evaluate.js';
import { metricsOf } from '../promql/expr.js';
import { type GroundTruth, runVirtual } from '../simulate/index.js';
import { formatDuration } from '../util/duration.js';
import { type AlertingRule, alertAnnotationParts } from './alert-rules.js';
import { renderAnnotation } from './annotation-render.js';
import type { RuleAnalysis } from './condition-analysis.js';
import { GENERATED_NOTICE, OUTPUT } from './defaults.js';
import { gridStore } from './grid-store.js';
import {
  type AlertRuleTest,
  alertLabels,
  gridInputSeries,
  PromtoolTestError,
  type PromtoolTestFile,
  type PromtoolTestGroup,
  seriesGrid,
} from './promtool-tests.js';
import type { QueryScope } from './query-scope.js';
import type { RecordingPlan } from './recording-rules.js';

/**
 * For each alert: a scenario whose ground truth expects it, a near miss where nothing allows it, and how long
 * the fault takes to hold the alert's condition (the recording is that lead plus the alert's `for`).
 */
export const ALERT_TEST_SCENARIOS: Readonly<
  Record<RuleId, { readonly fires: string; readonly quiet: string; readonly leadMs: number }>
> = {
  // The longest-running sync reaches 5 minutes, then keeps growing.
  WorkqueueStuckWorker: { fires: 'stuck-worker', quiet: 'slow-but-steady', leadMs: 10 * MINUTE_MS },
  WorkqueueBacklog: { fires: 'backlog', quiet: 'short-spike', leadMs: 5 * MINUTE_MS },
  WorkqueueHotLoop: { fires: 'hot-loop-status-write', quiet: 'busy-but-fine', leadMs: 5 * MINUTE_MS },
  // The sustained utilisation reads a 15-minute window.
  WorkqueueSaturated: { fires: 'saturation', quiet: 'busy-but-fine', leadMs: 15 * MINUTE_MS },
  WorkqueueSlowWork: { fires: 'blocking-call', quiet: 'slow-but-steady', leadMs: 5 * MINUTE_MS },
  WorkqueuePersistentFailures: { fires: 'persistent-failure', quiet: 'transient-errors', leadMs: 5 * MINUTE_MS },
  WorkqueueNotObservable: { fires: 'not-observable', quiet: 'standby', leadMs: 5 * MINUTE_MS },
};

const SEED = 1;
const SCRAPE_INTERVAL_MS = 30_000;
/** The rule file as the tests name it: relative to the tests' directory. */
const RULES_FROM_TESTS = '../workqueue-doctor.rules.yaml';

export type AlertTestOptions = {
  readonly analyses: readonly RuleAnalysis[];
  /** The generated alerting rules (their labels and runbook links are expected as they are). */
  readonly rules: readonly AlertingRule[];
  readonly plan: RecordingPlan;
  readonly scope: QueryScope;
  readonly evaluationIntervalMs: number;
};

export type AlertTestFile = { readonly path: string; readonly content: string };

/** One test file per enabled alert. */
export async function alertTestFiles(options: AlertTestOptions): Promise<AlertTestFile[]> {
  return Promise.all(options.analyses.map((analysis) => alertTestFile(analysis, options)));
}

async function alertTestFile(analysis: RuleAnalysis, options: AlertTestOptions): Promise<AlertTestFile> {
  const { rule } = analysis.settings;
  const scenarios = ALERT_TEST_SCENARIOS[rule.id];
  const durationMs = scenarios.leadMs + analysis.settings.forMs;
  const groups = [
    await testGroup(analysis, options, scenarios.fires, durationMs, 'fires'),
    await testGroup(analysis, options, scenarios.quiet, durationMs, 'quiet'),
  ];
  const file: PromtoolTestFile = {
    rule_files: [RULES_FROM_TESTS],
    evaluation_interval: formatDuration(options.evaluationIntervalMs),
    tests: groups,
  };
  return {
    path: OUTPUT.alertTest(rule.id),
    content: `# ${GENERATED_NOTICE}\n# Run from the repository root: promtool test rules ${OUTPUT.alertTestsDir}/*.yaml\n${stringify(file, { lineWidth: 0 })}`,
  };
}

/** The metrics an alert reads: its condition's and its evidence's. */
function metricsRead(analysis: RuleAnalysis): Set<string> {
  const names = new Set(metricsOf(analysis.condition));
  for (const id of analysis.settings.rule.evidence) for (const name of metricsOf(signal(id).expr)) names.add(name);
  return names;
}

type Recorded = { readonly truth: GroundTruth; readonly page: ParsedPage };
/**
 * The recordings rendered so far in this process, by scenario and length. A recording is a function of those alone
 * (the seed and the scrape interval are fixed), so every `generate` of one process (the tests run many) reads the
 * same ones; they are small (30-second scrapes of a quarter to half an hour).
 */
const recordings = new Map<string, Promise<Recorded>>();

/** `scenario` simulated for `durationMs` and its recording parsed: once per process. */
function recorded(scenario: string, durationMs: number): Promise<Recorded> {
  const key = `${scenario}/${durationMs}`;
  let pending = recordings.get(key);
  if (pending === undefined) {
    pending = runVirtual(scenario, { seed: SEED, durationMs }, { scrapeIntervalMs: SCRAPE_INTERVAL_MS }).then(
      (run) => ({
        truth: run.truth,
        page: parseExposition(run.recording.text(), { format: 'openmetrics', requireTimestamps: true }),
      }),
    );
    // A failed run is not kept: the next `generate` tries again and reports its own error.
    pending.catch(() => recordings.delete(key));
    recordings.set(key, pending);
  }
  return pending;
}

async function testGroup(
  analysis: RuleAnalysis,
  options: AlertTestOptions,
  scenario: string,
  durationMs: number,
  kind: 'fires' | 'quiet',
): Promise<PromtoolTestGroup> {
  const { rule } = analysis.settings;
  const { truth, page } = await recorded(scenario, durationMs);
  const read = metricsRead(analysis);
  const grid = seriesGrid(page, SCRAPE_INTERVAL_MS, (name) => read.has(name));
  const evalTime = formatDuration(grid.endMs);
  const expected = truth.queues.filter((q) => q.expected.includes(rule.id));
  const allowed = truth.queues.filter((q) => q.allowed.includes(rule.id) && !q.expected.includes(rule.id));
  let test: AlertRuleTest;
  if (kind === 'quiet') {
    if (expected.length + allowed.length > 0)
      throw new PromtoolTestError(`${scenario}: the ground truth allows ${rule.id}`);
    test = { eval_time: evalTime, alertname: rule.id, exp_alerts: [] };
  } else {
    if (expected.length === 0 || allowed.length > 0) {
      throw new PromtoolTestError(`${scenario}: the ground truth does not say exactly where ${rule.id} fires`);
    }
    const store = gridStore(grid.series, grid.intervalMs);
    const memo: SubtreeMemo = new Map();
    const parts = alertAnnotationParts(analysis, options.plan, options.scope);
    const alerting = options.rules.find((r) => r.alert === rule.id);
    test = {
      eval_time: evalTime,
      alertname: rule.id,
      exp_alerts: expected.map((q) => {
        const labels = alertLabels(truth, q, rule);
        const context = { labels, store, atMs: grid.endMs, memo };
        return {
          exp_labels: labels,
          exp_annotations: {
            summary: renderAnnotation(parts.summary, context),
            description: renderAnnotation(parts.description, context),
            ...(alerting === undefined ? {} : { runbook_url: alerting.annotations.runbook_url }),
          },
        };
      }),
    };
  }
  return {
    name: `${rule.id} ${kind === 'fires' ? 'fires on' : 'stays quiet on'} ${scenario}`,
    interval: formatDuration(grid.intervalMs),
    input_series: gridInputSeries(grid.series),
    alert_rule_test: [test],
  };
}
