/**
 * Mutations that must fail: a calibration that passes whatever a threshold is cannot tell a right threshold from a
 * wrong one. Each mutation changes one rule (one threshold halved or doubled, or one clause of its condition
 * dropped) and is caught when the calibration suite, diagnosed with it, judges at least one queue wrong at some
 * step. A mutation that leaves every verdict right is a missing boundary case.
 *
 * Contract:
 * - Thresholds that the condition does not read (those only the texts use, such as the sizing target) cannot
 *   change a verdict and are listed as such, never run.
 * - A clause is an operand of a set operation (`and`, `or`, `unless`) of the condition, outside the signals; a
 *   chain of one operation (`a and b and c`) is one list of clauses, not nested pairs. Dropping a clause replaces
 *   its operation with the other operand. The left operand of an operation that joins
 *   series of another scope (`and on(...)`) is the queue-level side and is never dropped alone.
 * - Each case is simulated once; the mutations share its recording. A mutation stops at its first wrong verdict.
 * - A mutation every case leaves right is then held to the product's detection promise for a gradual backlog
 *   (gradual-backlog-promise.ts), when its runs are given: a finding later than promised catches it, though the
 *   truth's detection budget would still allow it.
 */
import { memoizedBackend } from '../diagnosis/backend.js';
import { RULES, type RuleOverrides } from '../diagnosis/catalog.js';
import { type DiagnosisRule, type RuleId, type ThresholdSpec, thresholdNodes } from '../diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { describeExpr } from '../generate/condition-analysis.js';
import type { Expr } from '../promql/expr.js';
import { renderPromQL } from '../promql/render.js';
import { diagnoseSource } from '../service/diagnose-source.js';
import type { GroundTruth } from '../simulate/index.js';
import { recordingSourceFromText } from '../sources/recording-source.js';
import type { MetricsSource } from '../sources/source.js';
import { compareWithTruth, type QueueVerdict } from './compare.js';
import { GRADUAL_BACKLOG_RULE, type GradualBacklogRun, lateSteps } from './gradual-backlog-promise.js';
import { type CalibrationCase, describeCase, everyJudgedStep, simulateCase } from './run.js';

/** The factors each threshold is mutated by. */
export const THRESHOLD_FACTORS = [0.5, 2] as const;

export type Mutation =
  | {
      readonly kind: 'threshold';
      readonly rule: RuleId;
      readonly threshold: string;
      readonly factor: number;
      readonly value: number;
    }
  | { readonly kind: 'clause'; readonly rule: RuleId; readonly path: string; readonly clause: string };

/** What a mutation did to the calibration: caught (by which case, when, how) or not. */
export type MutationResult = {
  readonly mutation: Mutation;
  readonly caught: boolean;
  /** The first wrong verdict, when caught. */
  readonly by?: {
    readonly case: string;
    readonly minute: number;
    readonly missed: string[];
    readonly unexpected: string[];
  };
  /** Cases run before it was caught (all of them when it was not). */
  readonly casesRun: number;
};

/** One line for reports: `WorkqueueBacklog minDepth ×0.5 (10)` or `WorkqueueBacklog drop [lhs.rhs] …`. */
export function describeMutation(m: Mutation): string {
  return m.kind === 'threshold'
    ? `${m.rule} ${m.threshold} ×${m.factor} (${m.value})`
    : `${m.rule} without ${m.clause} [${m.path}]`;
}

/** The key naming a mutation in the reasons file: `Rule threshold ×factor` or `Rule [clause path]`. */
export function mutationKey(m: Mutation): string {
  return m.kind === 'threshold' ? `${m.rule} ${m.threshold} ×${m.factor}` : `${m.rule} [${m.path}]`;
}

/**
 * Why a mutation stays green: `implied` (another clause holds wherever this one decides, by how the queues count),
 * `allowed` (wherever it changes the answer the truth allows either), `missing` (a controller that would catch it
 * is not simulated yet).
 */
export const GREEN_KINDS = ['implied', 'allowed', 'missing'] as const;
export type GreenReason = { readonly kind: (typeof GREEN_KINDS)[number]; readonly reason: string };

/**
 * The reasons of a reasons file (`{ reasons: { key: { kind, reason } } }`) checked against `results`: every key of a
 * rule that was run names a mutation that was run and stayed green. Throws, naming each key that does not, so a reason never
 * outlives its mutation (caught, renamed or gone). With `part` (the results of a run of some of a rule's mutations,
 * `--part`), a key naming no mutation of `results` is left for the run that has it, as a rule not run is; the joined
 * run checks them all.
 */
export function parseGreenReasons(
  text: string,
  file: string,
  results: readonly MutationResult[],
  part = false,
): Map<string, GreenReason> {
  const parsed = JSON.parse(text) as { reasons?: Record<string, { kind?: unknown; reason?: unknown }> };
  if (parsed.reasons === undefined || typeof parsed.reasons !== 'object')
    throw new Error(`${file}: expected an object with "reasons"`);
  const byKey = new Map(results.map((r) => [mutationKey(r.mutation), r]));
  const rulesRun = new Set<string>(results.map((r) => r.mutation.rule));
  const problems: string[] = [];
  const reasons = new Map<string, GreenReason>();
  for (const [key, value] of Object.entries(parsed.reasons)) {
    // Reasons of rules not run this time (`--rules`) are left for their own run.
    if (!rulesRun.has(key.split(' ')[0] ?? '')) continue;
    const result = byKey.get(key);
    if (result === undefined && part) continue;
    if (result === undefined) problems.push(`${key}: no such mutation was run`);
    else if (result.caught) problems.push(`${key}: caught now, its reason is stale`);
    else if (!GREEN_KINDS.includes(value.kind as GreenReason['kind']) || typeof value.reason !== 'string')
      problems.push(`${key}: needs a kind (${GREEN_KINDS.join(', ')}) and a reason`);
    else reasons.set(key, { kind: value.kind as GreenReason['kind'], reason: value.reason });
  }
  if (problems.length > 0) throw new Error(`${file}:\n  ${problems.join('\n  ')}`);
  return reasons;
}

/**
 * The thresholds of each rule that its condition reads, and those it does not (text only): a threshold is read
 * when doubling it changes the condition (whether it appears as a named node or folded into a number).
 */
export function thresholdsByUse(): Array<{ rule: RuleId; inCondition: string[]; textOnly: string[] }> {
  return RULES.map((r) => {
    const values = defaults(r.thresholds);
    const rendered = renderPromQL(r.condition(thresholdNodes(values)));
    const reads = (name: string) =>
      renderPromQL(r.condition(thresholdNodes({ ...values, [name]: (values[name] as number) * 2 }))) !== rendered;
    const names = Object.keys(r.thresholds);
    return { rule: r.id, inCondition: names.filter(reads), textOnly: names.filter((n) => !reads(n)) };
  });
}

/** Every mutation of every rule (or of `only`): thresholds ×0.5 and ×2, then each droppable clause. */
export function mutations(only?: readonly RuleId[]): Mutation[] {
  const out: Mutation[] = [];
  const uses = thresholdsByUse();
  for (const r of RULES) {
    if (only !== undefined && !only.includes(r.id)) continue;
    const inCondition = uses.find((u) => u.rule === r.id)?.inCondition ?? [];
    for (const threshold of inCondition) {
      const spec = r.thresholds[threshold] as ThresholdSpec;
      for (const factor of THRESHOLD_FACTORS) {
        out.push({ kind: 'threshold', rule: r.id, threshold, factor, value: spec.default * factor });
      }
    }
    const condition = r.condition(thresholdNodes(defaults(r.thresholds)));
    for (const path of clausePaths(condition)) {
      out.push({ kind: 'clause', rule: r.id, path, clause: describeExpr(at(condition, path), r.thresholds) });
    }
  }
  return out;
}

/** The overrides that put `m` in force. */
export function overridesFor(m: Mutation): RuleOverrides {
  if (m.kind === 'threshold') return { rules: { [m.rule]: { thresholds: { [m.threshold]: m.value } } } };
  const r = RULES.find((x) => x.id === m.rule);
  if (r === undefined) throw new Error(`unknown rule ${m.rule}`);
  const condition: DiagnosisRule['condition'] = (t) => withoutClause(r.condition(t), m.path);
  return { rules: { [m.rule]: { condition } } };
}

/** A case simulated once, ready to be diagnosed under any mutation. */
type PreparedCase = {
  readonly name: string;
  readonly truth: GroundTruth;
  readonly source: MetricsSource;
  readonly times: readonly number[];
  readonly startMs: number;
};

/**
 * Runs every mutation over `cases` (simulated once each) and reports which the calibration catches; one that every
 * case leaves right is then held to `promise` (the gradual backlog's runs, opened and closed by the caller; none
 * given: not held). `progress` is called after each mutation.
 */
export async function runMutations(
  cases: readonly CalibrationCase[],
  list: readonly Mutation[],
  progress: (result: MutationResult, index: number) => void = () => {},
  promise: readonly GradualBacklogRun[] = [],
): Promise<MutationResult[]> {
  const prepared: PreparedCase[] = [];
  try {
    for (const c of cases) prepared.push(await prepare(c));
    const baseline = await firstWrongVerdict(prepared, {});
    if (baseline !== undefined) {
      throw new Error(
        `the calibration fails without any mutation (${baseline.name} at ${minutes(baseline.verdict)}m): fix it first`,
      );
    }
    const brokenPromise = await firstBrokenPromise(promise, {});
    if (brokenPromise !== undefined) {
      throw new Error(
        `the gradual backlog's promise fails without any mutation (${brokenPromise.run.name} at ${brokenPromise.minute}m): fix it first`,
      );
    }
    const results: MutationResult[] = [];
    for (const [index, mutation] of list.entries()) {
      // Cases where the mutated rule is expected or allowed first: they catch most mutations soonest.
      const ordered = [...prepared].sort((a, b) => relevance(b, mutation.rule) - relevance(a, mutation.rule));
      const overrides = overridesFor(mutation);
      const wrong = await firstWrongVerdict(ordered, overrides);
      const late = wrong === undefined ? await firstBrokenPromise(promise, overrides) : undefined;
      const result: MutationResult =
        wrong !== undefined
          ? {
              mutation,
              caught: true,
              casesRun: wrong.casesRun,
              by: {
                case: wrong.name,
                minute: minutes(wrong.verdict),
                missed: [...wrong.verdict.missed],
                unexpected: [...wrong.verdict.unexpected],
              },
            }
          : late !== undefined
            ? {
                mutation,
                caught: true,
                casesRun: ordered.length + late.runsRun,
                by: { case: late.run.name, minute: late.minute, missed: [GRADUAL_BACKLOG_RULE], unexpected: [] },
              }
            : { mutation, caught: false, casesRun: ordered.length + promise.length };
      results.push(result);
      progress(result, index);
    }
    return results;
  } finally {
    for (const p of prepared) await p.source.close();
  }
}

/**
 * The first run of the gradual backlog's promise that `overrides` break: the run, the minute (since its recording
 * began) of its first step past the due time without the finding, and how many runs were diagnosed.
 */
async function firstBrokenPromise(
  runs: readonly GradualBacklogRun[],
  overrides: RuleOverrides,
): Promise<{ run: GradualBacklogRun; minute: number; runsRun: number } | undefined> {
  for (const [index, run] of runs.entries()) {
    const late = await lateSteps(run, overrides);
    if (late.length === 0) continue;
    const firstLateMs = run.lastDrainedMs + Math.min(...late) * 1000;
    return { run, minute: tenthsOfMinute(firstLateMs - run.startMs), runsRun: index + 1 };
  }
  return undefined;
}

async function prepare(c: CalibrationCase): Promise<PreparedCase> {
  const run = await simulateCase(c);
  const source = recordingSourceFromText(run.recording.text(), `${c.scenario}-${c.seed ?? 'default'}.om`);
  const range = source.dataRange();
  if (range === undefined) throw new Error(`${describeCase(c)}: empty recording`);
  const times = everyJudgedStep(range);
  const backend = memoizedBackend(source.backend);
  return { name: describeCase(c), truth: run.truth, source: { ...source, backend }, times, startMs: range.startMs };
}

/** The first wrong verdict over `cases` at every judged step, or undefined when every verdict is right. */
async function firstWrongVerdict(
  cases: readonly PreparedCase[],
  overrides: RuleOverrides,
): Promise<{ name: string; verdict: QueueVerdict; casesRun: number } | undefined> {
  for (const [index, c] of cases.entries()) {
    for (const atMs of c.times) {
      const report = await diagnoseSource(c.source, { atMs, runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL, overrides });
      const wrong = compareWithTruth(report, c.truth, atMs - c.startMs).find((v) => !v.pass);
      if (wrong !== undefined) return { name: c.name, verdict: wrong, casesRun: index + 1 };
    }
  }
  return undefined;
}

/** 2 when the case's truth expects the rule, 1 when it allows it, 0 otherwise. */
function relevance(c: PreparedCase, rule: RuleId): number {
  let best = 0;
  for (const q of c.truth.queues) {
    if (q.expected.includes(rule)) best = 2;
    else if (q.allowed.includes(rule)) best = Math.max(best, 1);
  }
  return best;
}

/** When a verdict was judged, in minutes since its recording started (one decimal). */
function minutes(verdict: QueueVerdict): number {
  return tenthsOfMinute(verdict.elapsedMs);
}

/** `ms` in minutes, to a tenth: how a result names the time it was caught at. */
function tenthsOfMinute(ms: number): number {
  return Math.round((ms / 60_000) * 10) / 10;
}

function defaults(specs: Readonly<Record<string, ThresholdSpec>>): Record<string, number> {
  return Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, spec.default]));
}

const SET_OPS = new Set(['and', 'or', 'unless']);

/** Paths (`lhs`/`rhs` steps from the root, joined by dots) of every droppable clause of a condition. */
export function clausePaths(condition: Expr): string[] {
  const out: string[] = [];
  // `a unless b unless c` nests on the left only: `a unless (b unless c)` keeps what c removes from b, a clause whole.
  const sameChain = (parent: Expr & { kind: 'binary' }, child: Expr, side: 'lhs' | 'rhs'): boolean =>
    child.kind === 'binary' &&
    child.op === parent.op &&
    !(parent.op === 'unless' && side === 'rhs') &&
    child.matching === undefined &&
    parent.matching === undefined;
  const walk = (e: Expr, path: string[]): void => {
    if (e.kind !== 'binary' || !SET_OPS.has(e.op)) return;
    // `a unless b`: only b can go (a is what is being filtered); `a and on(...) b` joins b's scope onto a: only b.
    const lhsDroppable = e.op === 'or' || (e.op === 'and' && e.matching === undefined);
    if (lhsDroppable && !sameChain(e, e.lhs, 'lhs')) out.push([...path, 'lhs'].join('.'));
    if (!sameChain(e, e.rhs, 'rhs')) out.push([...path, 'rhs'].join('.'));
    walk(e.lhs, [...path, 'lhs']);
    walk(e.rhs, [...path, 'rhs']);
  };
  walk(condition, []);
  return out;
}

/** The subexpression at `path`. */
function at(e: Expr, path: string): Expr {
  let node = e;
  for (const step of path.split('.')) {
    if (node.kind !== 'binary') throw new Error(`no clause at ${path}`);
    node = step === 'lhs' ? node.lhs : node.rhs;
  }
  return node;
}

/** `condition` with the clause at `path` dropped: its parent set operation replaced by the other operand. */
export function withoutClause(condition: Expr, path: string): Expr {
  const steps = path.split('.');
  const rebuild = (node: Expr, depth: number): Expr => {
    if (node.kind !== 'binary') throw new Error(`no clause at ${path}`);
    const step = steps[depth];
    if (depth === steps.length - 1) return step === 'lhs' ? node.rhs : node.lhs;
    return step === 'lhs'
      ? { ...node, lhs: rebuild(node.lhs, depth + 1) }
      : { ...node, rhs: rebuild(node.rhs, depth + 1) };
  };
  return rebuild(condition, 0);
}

/** A Markdown table: one row per mutation (with why it stays green, where `reasons` says), then the thresholds not run. */
export function mutationsMarkdown(
  results: readonly MutationResult[],
  textOnly: ReadonlyArray<{ rule: string; threshold: string }>,
  reasons: ReadonlyMap<string, GreenReason> = new Map(),
): string {
  const rows = results.map((r) => {
    const by =
      r.by === undefined
        ? ''
        : `${r.by.case} at ${r.by.minute}m (${[...r.by.missed.map((m) => `missed ${m}`), ...r.by.unexpected.map((u) => `raised ${u}`)].join(', ')})`;
    const green = reasons.get(mutationKey(r.mutation));
    const why = r.caught || green === undefined ? '' : `${green.kind}: ${green.reason}`;
    return `| ${describeMutation(r.mutation).replaceAll('|', '\\|')} | ${r.caught ? 'caught' : '**not caught**'} | ${(by || why).replaceAll('|', '\\|')} |`;
  });
  const notRun =
    textOnly.length === 0
      ? ''
      : `\nNot run (read by the texts only, never by a condition): ${textOnly.map((t) => `${t.rule} ${t.threshold}`).join(', ')}.\n`;
  return (
    ['| mutation | calibration | first wrong verdict, or why it stays green |', '|---|---|---|', ...rows].join('\n') +
    '\n' +
    notRun
  );
}

/** `N implied, N allowed, N missing, N without a reason` of the green `results`: the kinds present, in that order. */
export function greenSummary(results: readonly MutationResult[], reasons: ReadonlyMap<string, GreenReason>): string {
  const green = results.filter((r) => !r.caught);
  const counts = new Map<string, number>();
  for (const r of green) {
    const kind = reasons.get(mutationKey(r.mutation))?.kind ?? 'without a reason';
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...GREEN_KINDS, 'without a reason' as const]
    .filter((kind) => counts.has(kind))
    .map((kind) => `${counts.get(kind)} ${kind}`)
    .join(', ');
}
