/**
 * The generated alert rules against every simulator scenario, in `promtool test rules`: each scenario's
 * recording (30 minutes, 15 s scrapes, a fixed seed) becomes the input series, its ground truth the expected
 * alerts at the end of the recording, and the rules are the bytes `generate` writes. promtool must pass for
 * every scenario (controller-runtime) and for the component-base form of backlog, hot loop and stuck worker.
 *
 * Also: the input series give promtool back the recording exactly (a round trip through promtool), the
 * assertions fail when the truth is wrong, and a rule expected on one queue and allowed on another is still
 * asserted for the queue that expects it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ruleSettings } from '../../src/diagnosis/catalog.js';
import { EVALUATION_INTERVAL_MS } from '../../src/diagnosis/rule.js';
import type { ParsedPage } from '../../src/exposition/parsed-page.js';
import { parseExposition } from '../../src/exposition/parser.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import {
  type AlertRuleRef,
  alertChecks,
  type PromtoolTestFile,
  promtoolRuleTest,
  promtoolTestYaml,
  seriesValues,
} from '../../src/generate/promtool-tests.js';
import type { QueryScope } from '../../src/generate/query-scope.js';
import { parseSelector } from '../../src/promql/selector.js';
import { DEFAULT_JOB, type Flavor, type GroundTruth, runVirtual, SCENARIO_NAMES } from '../../src/simulate/index.js';
import { tempDir } from '../simulate/helpers.js';
import { requireTool } from '../support/prometheus.js';
import { alertRulesOf, filesByPath, ruleFileOf, runTool } from './helpers.js';

const SEED = 1;
const DURATION_MS = 30 * 60_000;
const SCRAPE_INTERVAL_MS = 15_000;
const RULES_FILE = 'workqueue-doctor.rules.yaml';
/** promtool runs at once: one per core. */
const PARALLEL_RUNS = 2;

const files = filesByPath();
/** The rules generated for a fleet: a selector that matches the recordings' job, and cluster and namespace labels the recordings lack. */
const SELECTED_RULES_FILE = 'selected.rules.yaml';
/** The rules generated with a selector that matches no recording. */
const UNSELECTED_RULES_FILE = 'unselected.rules.yaml';
const rulesWith = (scope: QueryScope): string =>
  generateArtifacts({ scope }).find((f) => f.path === OUTPUT.alertRules)?.content ?? '';
const rules: AlertRuleRef[] = ruleSettings()
  .filter((s) => s.enabled)
  .map((s) => s.rule);
const work = tempDir('wqd-promtool-tests-');

beforeAll(() => {
  writeFileSync(join(work.path, RULES_FILE), files.get(OUTPUT.alertRules) ?? '');
  writeFileSync(
    join(work.path, SELECTED_RULES_FILE),
    rulesWith({
      selector: parseSelector(`job=~"${DEFAULT_JOB}|other"`),
      clusterLabel: 'cluster',
      namespaceLabel: 'namespace',
    }),
  );
  writeFileSync(
    join(work.path, UNSELECTED_RULES_FILE),
    rulesWith({ selector: parseSelector('job="another-operator"') }),
  );
});
afterAll(() => work.remove());

type Case = { readonly scenario: string; readonly flavor: Flavor };
const CASES: readonly Case[] = [
  ...SCENARIO_NAMES.map((scenario) => ({ scenario, flavor: 'controller-runtime' as const })),
  ...['backlog', 'hot-loop-status-write', 'stuck-worker'].map((scenario) => ({
    scenario,
    flavor: 'component-base' as const,
  })),
];

/** Recordings by case, each simulated once and shared by the tests that read it. */
const recordings = new Map<string, Promise<{ page: ParsedPage; truth: GroundTruth }>>();
function recording(c: Case): Promise<{ page: ParsedPage; truth: GroundTruth }> {
  const key = `${c.scenario}/${c.flavor}`;
  let found = recordings.get(key);
  if (found === undefined) {
    found = runVirtual(
      c.scenario,
      { seed: SEED, durationMs: DURATION_MS, flavor: c.flavor },
      { scrapeIntervalMs: SCRAPE_INTERVAL_MS },
    ).then((run) => ({
      page: parseExposition(run.recording.text(), { format: 'openmetrics', requireTimestamps: true }),
      truth: run.truth,
    }));
    recordings.set(key, found);
  }
  return found;
}

/** At most `PARALLEL_RUNS` promtool processes at a time. */
let running = 0;
const waiting: Array<() => void> = [];
async function limited<T>(task: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL_RUNS) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await task();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Writes the test file next to the rules and runs `promtool test rules` on it. */
async function promtoolTest(name: string, file: PromtoolTestFile): Promise<{ code: number; output: string }> {
  const path = join(work.path, `${name}.test.yaml`);
  writeFileSync(path, promtoolTestYaml(file));
  // Looked up here, so a missing promtool fails each test with what to install.
  const promtool = requireTool('promtool');
  return limited(() => runTool(promtool, ['test', 'rules', path]));
}

function testFor(
  page: ParsedPage,
  truth: GroundTruth,
  evaluationIntervalMs = EVALUATION_INTERVAL_MS,
  rulesFile = RULES_FILE,
): PromtoolTestFile {
  return promtoolRuleTest(page, truth, { rulesFile, rules, evaluationIntervalMs });
}

describe('promtool test rules over every scenario', () => {
  it('asserts the rules of the generated file', () => {
    expect(alertRulesOf(ruleFileOf(files)).map((r) => r.alert)).toEqual(rules.map((r) => r.id));
  });

  it.concurrent.each(CASES)(
    '$scenario ($flavor): the alerts firing at the end are the truth',
    async (c) => {
      const { page, truth } = await recording(c);
      const file = testFor(page, truth);
      const group = file.tests[0]!;
      expect(file.evaluation_interval).toBe('30s');
      expect(group.interval).toBe('15s');
      expect(group.input_series).toHaveLength(page.series.count);
      for (const test of [...(group.alert_rule_test ?? []), ...(group.promql_expr_test ?? [])]) {
        expect(test.eval_time).toBe('30m');
      }
      // Every expected diagnosis is asserted, and so is the absence of every diagnosis the truth does not allow.
      const asserted = JSON.stringify(group.promql_expr_test ?? []);
      for (const q of truth.queues) for (const id of q.expected) expect(asserted).toContain(`alertname=\\"${id}\\"`);
      const none = (group.alert_rule_test ?? []).map((t) => t.alertname);
      const mentioned = new Set(truth.queues.flatMap((q) => [...q.expected, ...q.allowed]));
      expect(none).toEqual(rules.map((r) => r.id).filter((id) => !mentioned.has(id)));

      const result = await promtoolTest(`${c.scenario}-${c.flavor}`, file);
      expect(result.code, `promtool test rules failed for ${c.scenario} (${c.flavor}):\n${result.output}`).toBe(0);
      expect(result.output).toContain('SUCCESS');
    },
    120_000,
  );

  it('fails when the truth is wrong: a hot loop that fires where no alert is expected', async () => {
    const { page, truth } = await recording({ scenario: 'hot-loop-status-write', flavor: 'controller-runtime' });
    const wrong: GroundTruth = { ...truth, queues: truth.queues.map((q) => ({ ...q, expected: [], allowed: [] })) };
    const result = await promtoolTest('wrong-truth', testFor(page, wrong));
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/alertname: WorkqueueHotLoop, time: 30m,[\s\S]*exp:\[\][\s\S]*got:\[/);
  });

  it('asserts an alert expected on one queue and allowed on another for the queue that expects it', async () => {
    const { page, truth } = await recording({ scenario: 'mixed', flavor: 'controller-runtime' });
    // The truth as if the healthy `deployment` queue might also show a hot loop.
    const conflicted: GroundTruth = {
      ...truth,
      queues: truth.queues.map((q) =>
        q.name === 'deployment' ? { ...q, allowed: [...q.allowed, 'WorkqueueHotLoop' as const] } : q,
      ),
    };
    const check = alertChecks(conflicted, rules).find((c) => c.rule.id === 'WorkqueueHotLoop');
    expect(check?.kind).toBe('present');
    const file = testFor(page, conflicted);
    const exprs = (file.tests[0]?.promql_expr_test ?? []).map((t) => t.expr);
    expect(exprs).toContain(
      'count(ALERTS{alertname="WorkqueueHotLoop", alertstate="firing", severity="warning", job="workqueue-doctor-sim", instance="mixed:8080", name="ingress-status", controller="ingress-status"})',
    );
    const passing = await promtoolTest('conflict', file);
    expect(passing.code, passing.output).toBe(0);
    // The same check fails when the queue it names has no such alert.
    const moved: GroundTruth = {
      ...conflicted,
      queues: conflicted.queues.map((q) =>
        q.name === 'ingress-status'
          ? { ...q, name: 'elsewhere', controller: 'elsewhere' }
          : q.name === 'deployment'
            ? q
            : { ...q, expected: [], allowed: [...q.expected, ...q.allowed] },
      ),
    };
    const failing = await promtoolTest('conflict-moved', testFor(page, moved));
    expect(failing.code).toBe(1);
    expect(failing.output).toContain('name=\\"elsewhere\\"');
  });
});

describe('promtool test rules with a fleet selector', () => {
  it.concurrent.each(CASES)(
    '$scenario ($flavor): a selector that matches the job fires the same alerts, with cluster and namespace labels configured',
    async (c) => {
      const { page, truth } = await recording(c);
      expect(truth.job).toBe(DEFAULT_JOB);
      const result = await promtoolTest(
        `selected-${c.scenario}-${c.flavor}`,
        testFor(page, truth, EVALUATION_INTERVAL_MS, SELECTED_RULES_FILE),
      );
      expect(result.code, `promtool test rules failed for ${c.scenario} (${c.flavor}):\n${result.output}`).toBe(0);
    },
    120_000,
  );

  it.concurrent.each(
    CASES.filter((c) => ['mixed', 'backlog', 'hot-loop-status-write', 'stuck-worker'].includes(c.scenario)),
  )(
    '$scenario ($flavor): a selector that matches no job fires no alert',
    async (c) => {
      const { page, truth } = await recording(c);
      expect(truth.queues.some((q) => q.expected.length > 0)).toBe(true);
      const none: GroundTruth = { ...truth, queues: truth.queues.map((q) => ({ ...q, expected: [], allowed: [] })) };
      const file = testFor(page, none, EVALUATION_INTERVAL_MS, UNSELECTED_RULES_FILE);
      expect((file.tests[0]?.alert_rule_test ?? []).map((t) => t.alertname)).toEqual(rules.map((r) => r.id));
      const result = await promtoolTest(`unselected-${c.scenario}-${c.flavor}`, file);
      expect(result.code, `promtool test rules failed for ${c.scenario} (${c.flavor}):\n${result.output}`).toBe(0);
      // The same truth fails against the unscoped rules: the alerts do fire there.
      const unscoped = await promtoolTest(`unscoped-${c.scenario}-${c.flavor}`, testFor(page, none));
      expect(unscoped.code).toBe(1);
    },
    120_000,
  );
});

describe('input series', () => {
  it('compress runs only where promtool rebuilds the values exactly', () => {
    expect(seriesValues([1, 1, 1])).toBe('1x2');
    expect(seriesValues([0, 1, 2, 3])).toBe('0+1x3');
    expect(seriesValues([10, 8, 6, 4, 7])).toBe('10-2x3 7');
    expect(seriesValues([-3, -5, -7, -9])).toBe('-3-2x3');
    expect(seriesValues([0, 1, 2, 2, 2])).toBe('0 1 2x2');
    expect(seriesValues([1, 2])).toBe('1 2');
    expect(seriesValues([undefined, undefined, 5, undefined, 6, undefined])).toBe('_x2 5 _ 6');
    // 0.1 + 0.1 + 0.1 is not 0.3 in float64: written out.
    expect(seriesValues([0.1, 0.2, 0.3, 0.4])).toBe('0.1 0.2 0.3 0.4');
    expect(seriesValues([0.1, 0.2, 0.1 + 0.1 + 0.1, 0.1 + 0.1 + 0.1 + 0.1])).toBe('0.1+0.1x3');
    expect(seriesValues([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e21, 1.5e-7])).toBe(
      'NaN Inf -Inf 1e+21 1.5e-7',
    );
  });

  it('give promtool back every recorded value at its time', async () => {
    const start = 1_700_000_000;
    const steps = 14;
    let tenth = 0;
    const tricky: (number | undefined)[][] = [
      Array.from({ length: steps }, (_, i) => i * 5),
      Array.from({ length: steps }, () => {
        tenth += 0.1;
        return tenth;
      }),
      [-3, -5, -7, 1e21, 1.5e-7, 5e-324, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.3, 2 ** 60, 7, 7, 7, 7],
      [4, undefined, undefined, 4, 4, 4, undefined, 9, 10, 11, 12, undefined, undefined, 13],
      [undefined, undefined, undefined, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    ];
    const labels = ['k="a"', 'k="b"', 'k="c"', 'k="we\\"ird\\\\"', 'k="late"'];
    const lines = ['# TYPE t gauge'];
    for (let s = 0; s < tricky.length; s++) {
      for (let i = 0; i < steps; i++) {
        const v = tricky[s]?.[i];
        if (v === undefined) continue;
        const text = v === Number.POSITIVE_INFINITY ? '+Inf' : v === Number.NEGATIVE_INFINITY ? '-Inf' : String(v);
        lines.push(`t{job="j",instance="i",${labels[s]}} ${text} ${start + i * 15}.000`);
      }
    }
    lines.push('# EOF');
    const page = parseExposition(`${lines.join('\n')}\n`, { format: 'openmetrics', requireTimestamps: true });
    const truth: GroundTruth = {
      scenario: 'round-trip',
      summary: '',
      job: 'j',
      instance: 'i',
      flavor: 'controller-runtime',
      standby: false,
      parameters: { seed: 0, duration: '', scrapeInterval: '', start: '', workers: 0, keys: 0, rate: 0 },
      queues: [],
    };
    // promtool loads input samples only up to its last evaluation, so evaluate at every step.
    const file = testFor(page, truth, 15_000);
    const group = file.tests[0]!;
    expect(group.interval).toBe('15s');
    // Each step: every series' latest value at or before it (the 5-minute lookback covers the gaps) and its time.
    const exprTests = [];
    for (let i = 0; i < steps; i++) {
      const latest = (row: readonly (number | undefined)[]) => {
        for (let k = i; k >= 0; k--) if (row[k] !== undefined) return { value: row[k] as number, at: k };
        return undefined;
      };
      const values = [];
      const times = [];
      for (let s = 0; s < tricky.length; s++) {
        const found = latest(tricky[s] ?? []);
        if (found === undefined) continue;
        values.push({ labels: `t{instance="i", job="j", ${labels[s]}}`, value: found.value });
        times.push({ labels: `{instance="i", job="j", ${labels[s]}}`, value: found.at * 15 });
      }
      exprTests.push({ expr: 't', eval_time: `${i * 15}s`, exp_samples: values });
      exprTests.push({ expr: 'timestamp(t)', eval_time: `${i * 15}s`, exp_samples: times });
    }
    const roundTrip: PromtoolTestFile = {
      ...file,
      tests: [{ ...group, alert_rule_test: [], promql_expr_test: exprTests }],
    };
    const yaml = promtoolTestYaml(roundTrip);
    expect((parse(yaml) as PromtoolTestFile).tests[0]?.input_series).toEqual(group.input_series);
    const result = await promtoolTest('round-trip', roundTrip);
    expect(result.code, result.output).toBe(0);
  });
});
