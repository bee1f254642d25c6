/**
 * The generated alert rules against every simulator scenario, in `promtool test rules`: each scenario's
 * recording (30 minutes, 15 s scrapes, a fixed seed) becomes the input series, its ground truth the expected
 * alerts at the end of the recording, and the rules are the bytes `generate` writes. promtool must pass for
 * every scenario (controller-runtime) and for the component-base form of backlog, hot loop and stuck worker.
 * The recordings are tested a few at a time, as one fleet (each is its own target, and every assertion names it):
 * promtool evaluates the rules once for the whole fleet, and a rule that let one target's series reach another's
 * alerts would fail.
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
  promtoolFleetTest,
  promtoolRuleTest,
  promtoolTestYaml,
  type RecordedTarget,
  seriesGrid,
  seriesValues,
} from '../../src/generate/promtool-tests.js';
import type { QueryScope } from '../../src/generate/query-scope.js';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
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

/**
 * How much one promtool test holds, in depth series plus queues. promtool's test engine refuses a query that loads
 * more samples than its limit (far below a Prometheus server's); the rules' 30-minute depth trend, a subquery at 5 s
 * steps that holds each depth series and each queue's sum at every step, reaches it first: 5 copies of the backlog
 * recording (one depth series, one queue each: 10) pass, 10 copies (20) fail. A case over the limit alone is tested
 * alone (the mixed scenario: 9 depth series of 5 queues).
 */
const LOAD_PER_TEST = 12;

/** A recording's load on the depth trend: its depth series (one per queue and priority) plus its queues. */
function depthLoad(page: ParsedPage): number {
  const depth = seriesGrid(page, SCRAPE_INTERVAL_MS, (name) => name === WORKQUEUE.depth).series;
  const queues = new Set(depth.map((s) => `${s.labels[LABEL.name]}/${s.labels[LABEL.controller] ?? ''}`));
  return depth.length + queues.size;
}

/**
 * `cases` in groups a promtool test can hold together, each case in the first group it fits: each group's load
 * within `LOAD_PER_TEST`, and no two recordings of one target (a scenario's two flavors share its `instance`).
 */
async function fleets(cases: readonly Case[]): Promise<Case[][]> {
  const groups: { cases: Case[]; load: number; instances: Set<string> }[] = [];
  for (const c of cases) {
    const { page, truth } = await recording(c);
    const load = depthLoad(page);
    const group = groups.find((g) => g.load + load <= LOAD_PER_TEST && !g.instances.has(truth.instance));
    if (group === undefined) groups.push({ cases: [c], load, instances: new Set([truth.instance]) });
    else {
      group.cases.push(c);
      group.load += load;
      group.instances.add(truth.instance);
    }
  }
  return groups.map((g) => g.cases);
}

/** The fleets of every case, grouped once for the tests that run them. */
let everyCaseFleets: Promise<Case[][]> | undefined;
const fleetsOfEveryCase = (): Promise<Case[][]> => {
  everyCaseFleets ??= fleets(CASES);
  return everyCaseFleets;
};

/** The promtool test of several cases' recordings at once, against `rulesFile`, with each truth mapped by `truthOf`. */
async function fleetTest(
  group: readonly Case[],
  rulesFile: string,
  truthOf: (truth: GroundTruth) => GroundTruth = (truth) => truth,
): Promise<PromtoolTestFile> {
  const targets: RecordedTarget[] = [];
  for (const c of group) {
    const { page, truth } = await recording(c);
    targets.push({ page, truth: truthOf(truth) });
  }
  return promtoolFleetTest(targets, { rulesFile, rules, evaluationIntervalMs: EVALUATION_INTERVAL_MS });
}

const caseName = (c: Case): string => `${c.scenario} (${c.flavor})`;
/** The test's name for a group of cases. */
const groupName = (group: readonly Case[]): string => group.map(caseName).join(', ');

describe('promtool test rules over every scenario', () => {
  it('asserts the rules of the generated file', () => {
    expect(alertRulesOf(ruleFileOf(files)).map((r) => r.alert)).toEqual(rules.map((r) => r.id));
  });

  it.concurrent.each(CASES)(
    '$scenario ($flavor): every expected alert, and the absence of every one the truth does not allow, is asserted',
    async (c) => {
      const { page, truth } = await recording(c);
      const file = testFor(page, truth);
      const group = file.tests[0]!;
      expect(file.evaluation_interval).toBe('30s');
      expect(group.interval).toBe('15s');
      expect(group.input_series).toHaveLength(page.series.count);
      for (const test of group.promql_expr_test ?? []) expect(test.eval_time).toBe('30m');
      const asserted = JSON.stringify(group.promql_expr_test ?? []);
      for (const q of truth.queues) for (const id of q.expected) expect(asserted).toContain(`alertname=\\"${id}\\"`);
      // With one recording, a rule its truth neither expects nor allows must not fire anywhere.
      const mentioned = new Set(truth.queues.flatMap((q) => [...q.expected, ...q.allowed]));
      const none = (group.promql_expr_test ?? [])
        .filter((t) => t.exp_samples.length === 0 && !t.expr.includes(' unless '))
        .map((t) => t.expr);
      expect(none).toEqual(
        rules.filter((r) => !mentioned.has(r.id)).map((r) => `ALERTS{alertname="${r.id}", alertstate="firing"}`),
      );
    },
    120_000,
  );

  it('holds every case, each in one fleet of distinct targets', async () => {
    const groups = await fleetsOfEveryCase();
    expect(groups.flat().map(caseName).sort()).toEqual(CASES.map(caseName).sort());
    expect(groups.length).toBeLessThan(CASES.length / 2);
    for (const group of groups) {
      const instances = await Promise.all(group.map(async (c) => (await recording(c)).truth.instance));
      expect(new Set(instances).size, groupName(group)).toBe(group.length);
    }
  });

  it('the alerts firing at the end are the truth, for every case in its fleet', { timeout: 600_000 }, async () => {
    const groups = await fleetsOfEveryCase();
    const results = await Promise.all(
      groups.map(async (group) => ({
        group,
        result: await promtoolTest(`fleet-${CASES.indexOf(group[0]!)}`, await fleetTest(group, RULES_FILE)),
      })),
    );
    for (const { group, result } of results) {
      expect(result.code, `promtool test rules failed for ${groupName(group)}:\n${result.output}`).toBe(0);
      expect(result.output).toContain('SUCCESS');
    }
  });

  it('fails when the truth is wrong: a hot loop that fires where no alert is expected', async () => {
    const { page, truth } = await recording({ scenario: 'hot-loop-status-write', flavor: 'controller-runtime' });
    const wrong: GroundTruth = { ...truth, queues: truth.queues.map((q) => ({ ...q, expected: [], allowed: [] })) };
    const result = await promtoolTest('wrong-truth', testFor(page, wrong));
    expect(result.code).toBe(1);
    expect(result.output).toMatch(
      /expr: "ALERTS\{alertname=\\"WorkqueueHotLoop\\", alertstate=\\"firing\\"\}", time: 30m,\s*exp: nil\s*got: \{/,
    );
  });

  it('fails in a fleet when a target fires an alert its truth does not allow, though another target expects it', async () => {
    const loop: Case = { scenario: 'hot-loop-status-write', flavor: 'controller-runtime' };
    const quiet: Case = { scenario: 'healthy', flavor: 'controller-runtime' };
    const passing = await promtoolTest('fleet-right', await fleetTest([quiet, loop], RULES_FILE));
    expect(passing.code, passing.output).toBe(0);
    // The loop's truth emptied: the healthy target still expects nothing, and the loop's alert is now stray.
    const loopInstance = (await recording(loop)).truth.instance;
    const failing = await promtoolTest(
      'fleet-stray',
      await fleetTest([quiet, loop], RULES_FILE, (truth) =>
        truth.instance === loopInstance
          ? { ...truth, queues: truth.queues.map((q) => ({ ...q, expected: [], allowed: [] })) }
          : truth,
      ),
    );
    expect(failing.code).toBe(1);
    expect(failing.output).toContain(`instance="${loopInstance}"`);
  });

  it('refuses a fleet holding one target twice, or recordings of different lengths or scrape intervals', async () => {
    const backlog = await recording({ scenario: 'backlog', flavor: 'controller-runtime' });
    const options = { rulesFile: RULES_FILE, rules, evaluationIntervalMs: EVALUATION_INTERVAL_MS };
    const componentBase = await recording({ scenario: 'backlog', flavor: 'component-base' });
    expect(() => promtoolFleetTest([backlog, componentBase], options)).toThrow(
      'two recordings of the target {job="workqueue-doctor-sim", instance="backlog:8080"}',
    );
    expect(() => promtoolFleetTest([], options)).toThrow('at least one recording');
    const short = await runVirtual(
      'healthy',
      { seed: SEED, durationMs: 20 * 60_000 },
      { scrapeIntervalMs: SCRAPE_INTERVAL_MS },
    );
    const shortPage = parseExposition(short.recording.text(), { format: 'openmetrics', requireTimestamps: true });
    expect(() => promtoolFleetTest([backlog, { page: shortPage, truth: short.truth }], options)).toThrow(
      /instance="healthy:8080"\} is scraped every 15s for 20m, .*backlog:8080.* every 15s for 30m: one test needs one grid/,
    );
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
  it('a selector that matches the job fires the same alerts, with cluster and namespace labels configured', {
    timeout: 600_000,
  }, async () => {
    const groups = await fleetsOfEveryCase();
    const results = await Promise.all(
      groups.map(async (group) => {
        for (const c of group) expect((await recording(c)).truth.job).toBe(DEFAULT_JOB);
        const file = await fleetTest(group, SELECTED_RULES_FILE);
        return { group, result: await promtoolTest(`selected-${CASES.indexOf(group[0]!)}`, file) };
      }),
    );
    for (const { group, result } of results) {
      expect(result.code, `promtool test rules failed for ${groupName(group)}:\n${result.output}`).toBe(0);
    }
  });

  it('a selector that matches no job fires no alert, where the unscoped rules do', { timeout: 300_000 }, async () => {
    const firing = CASES.filter((c) =>
      ['mixed', 'backlog', 'hot-loop-status-write', 'stuck-worker'].includes(c.scenario),
    );
    const none = (truth: GroundTruth): GroundTruth => ({
      ...truth,
      queues: truth.queues.map((q) => ({ ...q, expected: [], allowed: [] })),
    });
    const groups = await fleets(firing);
    expect(groups.flat().map(caseName).sort()).toEqual(firing.map(caseName).sort());
    await Promise.all(
      groups.map(async (group) => {
        for (const c of group) expect((await recording(c)).truth.queues.some((q) => q.expected.length > 0)).toBe(true);
        const file = await fleetTest(group, UNSELECTED_RULES_FILE, none);
        // Nothing may fire: one assertion per rule, and no other.
        expect((file.tests[0]?.promql_expr_test ?? []).map((t) => t.expr)).toEqual(
          rules.map((r) => `ALERTS{alertname="${r.id}", alertstate="firing"}`),
        );
        const index = CASES.indexOf(group[0]!);
        const result = await promtoolTest(`unselected-${index}`, file);
        expect(result.code, `promtool test rules failed for ${groupName(group)}:\n${result.output}`).toBe(0);
        // The same truth fails against the unscoped rules: the alerts do fire there.
        const unscoped = await promtoolTest(`unscoped-${index}`, await fleetTest(group, RULES_FILE, none));
        expect(unscoped.code).toBe(1);
        for (const c of group) expect(unscoped.output).toContain(`instance="${(await recording(c)).truth.instance}"`);
      }),
    );
  });
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
