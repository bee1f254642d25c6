/**
 * When conditions hold: at `at` and at every step of their `for` before it (as a Prometheus alert, evaluated on
 * the grid of `step`), and since when (traced back step by step, or carried over from the previous evaluation
 * of the same source). A condition that holds at `at` but not yet at every step of its `for` is pending, as a
 * Prometheus alert is: its `since` is known and it fires at `since + for` if it keeps holding. A `for` is never
 * shortened: steps before the first sample hold nothing, so a history shorter than `for` leaves the condition
 * pending, never firing. A rule with a keep (`keepFiringForMs`) fires on through steps where its condition does not
 * hold, as an alert with `keep_firing_for` does; its state is replayed from the steps (`replayKept`), not carried.
 *
 * Steps lie on the grid of multiples of `step` (offset by `phase` where the backend's numbers are exact only at
 * its own times: a Prometheus's rule group evaluations), so successive evaluations ask for the same times: what a
 * condition gave at a step is kept in the `EvaluationMemory` (as the keys it held for) and reused while the
 * data behind it is unchanged (the backend's change watermark), so an evaluation of a service computes the
 * new steps only. Every condition due at a time is evaluated in one batch, which computes each signal they
 * share once per time.
 */
import type { ChangeReader } from '../promql/backend.js';
import type { Expr } from '../promql/expr.js';
import { InputPlans } from '../promql/input-plans.js';
import type { InstantVector, Labels } from '../promql/vector.js';
import { type DiagnosisBackend, evaluateBatch, runCovering } from './backend.js';
import type { RuleSettings } from './catalog.js';
import type { ObservationSettings } from './observation.js';
import { conditionWith } from './rule.js';
import { SIGNAL_WINDOW_MS } from './signals.js';

/** How far back `since` is traced. */
const SINCE_LOOKBACK_MS = 60 * 60_000;
/** Steps traced back per batch. */
const TRACE_CHUNK = 20;

/** The settings of a rule or of an observation: a condition with the thresholds in force, and its `for`. */
export type ConditionSettings = RuleSettings | ObservationSettings;

/** One condition to check. */
export type ConditionCheck = {
  readonly settings: ConditionSettings;
  /** The key of a series of the condition's output: a queue's or a target's. */
  readonly keyOf: (labels: Labels) => string;
  /** Whether to find since when each key holds (rules), or only which keys hold (observations). */
  readonly traceSince: boolean;
};

/**
 * The keys a check holds for at every step of its `for` (firing), and for a check that traces, since when each
 * key holding at the evaluation time has held: firing keys and pending ones (holding now, but not yet for the
 * whole `for`) alike.
 */
export type CheckResult = { readonly keys: ReadonlySet<string>; readonly since: ReadonlyMap<string, number> };

export type CheckOptions = {
  readonly at: number;
  readonly step: number;
  /** The grid's offset from the multiples of `step` (`DiagnosisBackend.gridPhase`); 0 by default. */
  readonly phase?: number;
  /**
   * Earliest time with data: steps before it hold nothing (they are not evaluated), and no `since` is earlier.
   * Undefined where the source cannot tell (Prometheus): every step is evaluated.
   */
  readonly historyStartMs?: number;
  readonly memory: EvaluationMemory;
  /** Once aborted, the check rejects at the backend's next unit of work (the service is stopping). */
  readonly signal?: AbortSignal;
};

const NOTHING: ReadonlySet<string> = new Set();

/**
 * What is kept between evaluations of one source: the keys each condition held for at each grid step, and for
 * each condition and key that held at an evaluation, the time it had held since and that evaluation's time.
 * A memory made with `carried: false` lives for one evaluation (steps still shared within it).
 */
export class EvaluationMemory {
  readonly #carried: boolean;
  /** By condition (id and thresholds), then step time: the keys it held for. */
  readonly #steps = new Map<string, Map<number, ReadonlySet<string>>>();
  /** By condition (id, thresholds and `for`), then key. */
  readonly #since = new Map<string, Map<string, { readonly sinceMs: number; readonly atMs: number }>>();
  /**
   * By condition (id and thresholds), its expression: the same object at every evaluation, so that what the
   * evaluator remembers on its nodes (promql/input-plans.ts) serves the next evaluation too.
   */
  readonly #conditions = new Map<string, Expr>();
  /**
   * What the engine derives from the label sets of the series it lists (the queues, their keys by scope), by what
   * it is: remade only when the series listed change (promql/input-plans.ts).
   */
  readonly listedSeries = new InputPlans<string>();
  #backend: DiagnosisBackend | undefined;
  #changes: ChangeReader | undefined;

  constructor(options: { readonly carried: boolean } = { carried: true }) {
    this.#carried = options.carried;
  }

  /**
   * Before an evaluation at `at` over `backend`: forgets the steps the data written since the previous
   * evaluation may change (all of them over a backend that cannot tell) and those too old to be asked for.
   * Another backend than the previous evaluation's starts the memory afresh.
   */
  begin(backend: DiagnosisBackend, at: number): void {
    if (backend !== this.#backend) {
      this.#changes?.close();
      this.#steps.clear();
      this.#since.clear();
      this.#backend = backend;
      this.#changes = this.#carried ? backend.changes?.() : undefined;
    }
    const changedFrom = this.#changes === undefined ? Number.NEGATIVE_INFINITY : this.#changes.takeEarliest();
    const oldest = at - SINCE_LOOKBACK_MS - SIGNAL_WINDOW_MS;
    for (const byTime of this.#steps.values()) {
      for (const t of byTime.keys()) if (t >= changedFrom || t < oldest) byTime.delete(t);
    }
  }

  /** Stops tracking the backend's changes. */
  close(): void {
    this.#changes?.close();
    this.#changes = undefined;
    this.#backend = undefined;
  }

  /** How many (condition, key) pairs have a remembered `since`. */
  rememberedSince(): number {
    let n = 0;
    for (const byKey of this.#since.values()) n += byKey.size;
    return n;
  }

  /** The steps kept for a condition, by time. */
  stepsOf(condition: string): Map<number, ReadonlySet<string>> {
    let byTime = this.#steps.get(condition);
    if (byTime === undefined) {
      byTime = new Map();
      this.#steps.set(condition, byTime);
    }
    return byTime;
  }

  /** The expression of the condition of `settings`, made at its first evaluation. */
  conditionOf(settings: ConditionSettings): Expr {
    const key = conditionKey(settings);
    let condition = this.#conditions.get(key);
    if (condition === undefined) {
      condition = conditionOf(settings);
      this.#conditions.set(key, condition);
    }
    return condition;
  }

  /** The `since` remembered for a condition, by key. */
  sinceOf(condition: string): Map<string, { readonly sinceMs: number; readonly atMs: number }> {
    let byKey = this.#since.get(condition);
    if (byKey === undefined) {
      byKey = new Map();
      this.#since.set(condition, byKey);
    }
    return byKey;
  }
}

function conditionOf(settings: ConditionSettings): Expr {
  return 'rule' in settings
    ? conditionWith(settings.rule, settings.thresholds)
    : conditionWith(settings.observation, settings.thresholds);
}

function conditionKey(settings: ConditionSettings): string {
  const id = 'rule' in settings ? settings.rule.id : settings.observation.id;
  return `${id}\u0000${JSON.stringify(settings.thresholds)}`;
}

function sinceKey(settings: ConditionSettings): string {
  return `${conditionKey(settings)}\u0000${settings.forMs}`;
}

/**
 * The check's step times, ascending: the grid steps from the last one at or before `at - for` (so that a `for`
 * that is not a whole number of steps is covered in full), then `at`.
 */
function checkTimes(settings: ConditionSettings, options: CheckOptions): number[] {
  const { at, step } = options;
  const grid = gridStepAtOrBefore(at, options);
  const first = gridStepAtOrBefore(at - settings.forMs, options);
  const times = stepTimes(grid, step, Math.round((grid - first) / step));
  if (grid !== at) times.push(at);
  return times;
}

/** The times worth evaluating: those at or after the first sample (earlier ones hold nothing). */
function withData(times: readonly number[], historyStartMs: number | undefined): number[] {
  return historyStartMs === undefined ? [...times] : times.filter((t) => t >= historyStartMs);
}

/** The condition of one check and where its steps are kept. */
type Plan = {
  readonly check: ConditionCheck;
  readonly condition: Expr;
  readonly steps: Map<number, ReadonlySet<string>>;
};

/**
 * Evaluates the plans at each of `times` (evenly spaced) where their steps lack it, in one batch (the backend
 * computes each signal the conditions share once per time).
 */
async function fill(
  backend: DiagnosisBackend,
  plans: readonly Plan[],
  times: readonly number[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const due = plans.filter((p) => times.some((t) => !p.steps.has(t)));
  if (due.length === 0) return;
  const missing = runCovering(times, (t) => due.some((p) => !p.steps.has(t)));
  const vectors = await evaluateBatch(
    backend,
    due.map((p) => p.condition),
    missing,
    signal,
  );
  due.forEach((plan, i) => {
    missing.forEach((t, j) => {
      if (!plan.steps.has(t)) plan.steps.set(t, keysOf(vectors[i]?.[j] ?? [], plan.check.keyOf));
    });
  });
}

function keysOf(vector: InstantVector, keyOf: (labels: Labels) => string): ReadonlySet<string> {
  return vector.length === 0 ? NOTHING : new Set(vector.map((s) => keyOf(s.labels)));
}

/**
 * Which keys each check holds for at `at` and every step of its `for`, and for checks that trace, since when
 * each key holding at `at` has held (firing or pending). `atExprs` are evaluated at `at` in the same batch as
 * the conditions (the report's signals share their subexpressions); their vectors are returned in order.
 *
 * A key remembered to hold at an evaluation whose time falls within this evaluation's `for` steps, and holding
 * at every step after it, held throughout, so it keeps the remembered `since` (no earlier than the lookback
 * and the first sample allow) instead of being traced back again. The memory is updated: the keys holding now
 * are remembered with this evaluation's time, those that no longer hold are forgotten.
 */
export async function checkConditions(
  backend: DiagnosisBackend,
  checks: readonly ConditionCheck[],
  atExprs: readonly Expr[],
  options: CheckOptions,
): Promise<{ results: CheckResult[]; atVectors: InstantVector[] }> {
  const { at, step, memory, signal } = options;
  const plans: Plan[] = checks.map((check) => ({
    check,
    condition: memory.conditionOf(check.settings),
    steps: memory.stepsOf(conditionKey(check.settings)),
  }));
  const timesOf = checks.map((c) => checkTimes(c.settings, options));

  // `at`, with the expressions asked for there.
  const atDue = plans.filter((p) => !p.steps.has(at));
  const atBatch = await evaluateBatch(backend, [...atExprs, ...atDue.map((p) => p.condition)], [at], signal);
  atDue.forEach((plan, i) => {
    plan.steps.set(at, keysOf(atBatch[atExprs.length + i]?.[0] ?? [], plan.check.keyOf));
  });
  const atVectors = atExprs.map((_, i) => atBatch[i]?.[0] ?? []);

  // The grid steps of every `for`: in one batch over one evenly spaced run from the earliest where the backend
  // shares work between expressions and times, each condition over its own steps otherwise (a remote backend's
  // range queries then cover no more than each `for`), those lacking the same steps in one batch (a service's
  // later evaluations lack only the newest steps of every `for`: one batch, whose signals are computed once).
  const grid = gridStepAtOrBefore(at, options);
  const gridSteps = plans
    .map((plan, i) => ({ plan, times: withData(timesOf[i] ?? [], options.historyStartMs).filter((t) => t !== at) }))
    .filter((x) => x.times.length > 0);
  if (backend.evaluateBatch !== undefined && backend.stepCost !== 'per-time') {
    const earliest = Math.min(...gridSteps.map((x) => x.times[0] ?? grid));
    const run = earliest <= grid ? stepTimes(grid, step, Math.round((grid - earliest) / step)) : [];
    await fill(
      backend,
      gridSteps.map((x) => x.plan),
      run,
      signal,
    );
  } else {
    const byMissing = new Map<string, { plans: Plan[]; times: readonly number[] }>();
    for (const x of gridSteps) {
      const missing = runCovering(x.times, (t) => !x.plan.steps.has(t));
      if (missing.length === 0) continue;
      const key = missing.join(',');
      const group = byMissing.get(key);
      if (group === undefined) byMissing.set(key, { plans: [x.plan], times: missing });
      else group.plans.push(x.plan);
    }
    await Promise.all([...byMissing.values()].map((g) => fill(backend, g.plans, g.times, signal)));
  }

  const results: CheckResult[] = [];
  const tracing: Array<{ plan: Plan; alive: Set<string>; since: Map<string, number>; earliest: number }> = [];
  const keeping: KeptCheck[] = [];
  const floor = Math.max(at - SINCE_LOOKBACK_MS, options.historyStartMs ?? Number.NEGATIVE_INFINITY);
  plans.forEach((plan, i) => {
    const times = timesOf[i] ?? [at];
    const holds = (t: number, key: string) => (plan.steps.get(t) ?? NOTHING).has(key);
    const from = times[0] ?? at;
    if (plan.check.traceSince && keepOf(plan.check.settings) > 0) {
      const kept: KeptCheck = { plan, firing: new Set(), since: new Map() };
      results.push({ keys: kept.firing, since: kept.since });
      keeping.push(kept);
      return;
    }
    if (!plan.check.traceSince) {
      const atKeys = plan.steps.get(at) ?? NOTHING;
      results.push({ keys: new Set([...atKeys].filter((k) => times.every((t) => holds(t, k)))), since: new Map() });
      return;
    }
    const firing = new Set<string>();
    const since = new Map<string, number>();
    results.push({ keys: firing, since });
    const remembered = memory.sinceOf(sinceKey(plan.check.settings));
    const alive = new Set<string>();
    for (const key of plan.steps.get(at) ?? NOTHING) {
      // Back from `at` through the `for` steps while the key holds; a remembered run that reaches into them
      // (it held at a previous evaluation, at or after the step reached) carries its `since`.
      const before = remembered.get(key);
      let start = at;
      let carried: number | undefined;
      for (let j = times.length - 1; j >= 0; j--) {
        const t = times[j] as number;
        if (before !== undefined && before.atMs <= at && t <= before.atMs) {
          carried = Math.max(before.sinceMs, floorStep(from, step, floor));
          break;
        }
        if (!holds(t, key)) break;
        start = t;
      }
      const sinceMs = carried ?? start;
      since.set(key, sinceMs);
      // Firing once it has held for the whole `for`, as a Prometheus alert whose pending start is `since`.
      if (at - sinceMs >= plan.check.settings.forMs) firing.add(key);
      if (carried === undefined && start === from) alive.add(key);
    }
    tracing.push({ plan, alive, since, earliest: from });
  });

  // Trace back, a chunk of steps at a time for every check that still has keys holding.
  for (;;) {
    const active = tracing.filter((t) => t.alive.size > 0 && t.earliest - step >= floor);
    if (active.length === 0) break;
    const end = Math.max(...active.map((t) => t.earliest)) - step;
    const count = Math.min(TRACE_CHUNK, Math.floor((end - floor) / step) + 1);
    const older = stepTimes(end, step, count - 1);
    await fill(
      backend,
      active.map((t) => t.plan),
      older,
      signal,
    );
    for (const trace of active) {
      for (let i = older.length - 1; i >= 0 && trace.alive.size > 0; i--) {
        const t = older[i] as number;
        if (t >= trace.earliest) continue;
        const keys = trace.plan.steps.get(t) ?? NOTHING;
        for (const key of [...trace.alive]) {
          if (keys.has(key)) trace.since.set(key, t);
          else trace.alive.delete(key);
        }
        trace.earliest = t;
      }
    }
  }

  for (const kept of keeping) await replayKept(backend, kept, options, floor);

  // A time off the grid is never asked for again.
  if (grid !== at) for (const plan of plans) plan.steps.delete(at);
  for (const trace of tracing) {
    const remembered = memory.sinceOf(sinceKey(trace.plan.check.settings));
    for (const key of remembered.keys()) if (!trace.since.has(key)) remembered.delete(key);
    for (const [key, sinceMs] of trace.since) remembered.set(key, { sinceMs, atMs: at });
  }
  return { results, atVectors };
}

/** A rule kept firing through dips (`keepFiringForMs`) and what it gives: the keys firing, and since when. */
type KeptCheck = { readonly plan: Plan; readonly firing: Set<string>; readonly since: Map<string, number> };

/** A rule's `keepFiringForMs`; an observation is never kept. */
function keepOf(settings: ConditionSettings): number {
  return 'rule' in settings ? settings.keepFiringForMs : 0;
}

/**
 * The keys of a rule kept firing through dips that fire or are pending at `at`, and since when, as a Prometheus
 * alert with `keep_firing_for` is: pending from a step where the condition holds, firing once it has held at
 * every step of the `for`, and once firing, firing on through steps where it does not hold until the keep has
 * passed since the first of them (the condition holding again within it resumes the same alert, its `for` not
 * started again). The state is replayed step by step from the last time it was surely inactive: a run of steps
 * without the condition as long as the keep (a firing alert has resolved by then, a pending one at once), or the
 * lookback's `floor`, where a key whose condition held on and off since is taken as starting there.
 */
async function replayKept(
  backend: DiagnosisBackend,
  kept: KeptCheck,
  options: CheckOptions,
  floor: number,
): Promise<void> {
  const { at, step, signal } = options;
  const { plan, firing, since } = kept;
  const { forMs } = plan.check.settings;
  const keepMs = keepOf(plan.check.settings);
  const holds = (t: number, key: string) => (plan.steps.get(t) ?? NOTHING).has(key);
  const grid = gridStepAtOrBefore(at, options);
  // Steps without the condition after which a firing alert has resolved: the first at the keep or later.
  const resolvedAfter = Math.ceil(keepMs / step) + 1;

  // Keys holding at `at` or at a step of the keep before it: only those can fire or be pending.
  const recent = grid >= floor ? stepTimes(grid, step, Math.floor((grid - Math.max(floor, grid - keepMs)) / step)) : [];
  await fill(backend, [plan], recent, signal);
  const keys = new Set(plan.steps.get(at) ?? NOTHING);
  for (const t of recent) for (const key of plan.steps.get(t) ?? NOTHING) keys.add(key);
  if (keys.size === 0) return;

  // Back from `at` to each key's last run of `resolvedAfter` steps without the condition, a chunk at a time.
  const startOf = new Map<string, number>();
  const missedRun = new Map<string, number>();
  for (const key of keys) missedRun.set(key, holds(at, key) || grid === at ? 0 : 1);
  let earliest = grid + step;
  while (missedRun.size > 0 && earliest - step >= floor) {
    const end = earliest - step;
    const count = Math.min(TRACE_CHUNK, Math.floor((end - floor) / step) + 1);
    const older = stepTimes(end, step, count - 1);
    await fill(backend, [plan], older, signal);
    for (let i = older.length - 1; i >= 0 && missedRun.size > 0; i--) {
      const t = older[i] as number;
      for (const [key, run] of missedRun) {
        const missed = holds(t, key) ? 0 : run + 1;
        if (missed >= resolvedAfter) {
          startOf.set(key, t);
          missedRun.delete(key);
        } else missedRun.set(key, missed);
      }
      earliest = t;
    }
  }
  for (const key of missedRun.keys()) startOf.set(key, earliest);

  for (const [key, start] of startOf) {
    const times = stepTimes(grid, step, Math.round((grid - start) / step));
    if (grid !== at) times.push(at);
    let activeSince: number | undefined;
    let isFiring = false;
    let missedSince: number | undefined;
    for (const t of times) {
      if (holds(t, key)) {
        missedSince = undefined;
        activeSince ??= t;
        if (t - activeSince >= forMs) isFiring = true;
        continue;
      }
      if (isFiring) {
        missedSince ??= t;
        if (t - missedSince < keepMs) continue;
      }
      activeSince = undefined;
      isFiring = false;
      missedSince = undefined;
    }
    if (activeSince === undefined) continue;
    since.set(key, activeSince);
    if (isFiring) firing.add(key);
  }
}

/** The last step of the grid at or before `t`. */
function gridStepAtOrBefore(t: number, { step, phase = 0 }: Pick<CheckOptions, 'step' | 'phase'>): number {
  return phase + Math.floor((t - phase) / step) * step;
}

/** The earliest `for` step at or after `floor`, on the grid of steps ending at `from`. */
function floorStep(from: number, step: number, floor: number): number {
  if (!(floor > Number.NEGATIVE_INFINITY)) return Number.NEGATIVE_INFINITY;
  return from - Math.floor((from - floor) / step) * step;
}

/** `count + 1` times ending at `end`, `step` apart, ascending. */
function stepTimes(end: number, step: number, count: number): number[] {
  const times: number[] = [];
  for (let i = count; i >= 0; i--) times.push(end - i * step);
  return times;
}
