/**
 * The diagnosis engine: evaluates every signal and every rule for every queue at one time, and builds
 * the report. It does no I/O of its own; numbers come from a `DiagnosisBackend`.
 *
 * A rule's condition holds for a queue only if it held at every evaluation step across the rule's `for`
 * duration (steps of `stepMs`, ending at the evaluation time), exactly as a Prometheus alert with that
 * `for` evaluated on the same grid would fire. A condition holding now for less than its `for` is a pending
 * finding (`state: "pending"`, `firesAt`); a rule that could not be judged for lack of data is listed under the
 * queue's `unknown` (judgement.ts). The status says which: firing, pending, unknown or ok.
 *
 * Observations are evaluated after the rules, per queue, with the same `for` semantics. They fill the
 * queue's `observations` and nothing else: never a finding, never the status.
 */
import { CONTROLLER_RUNTIME, LABEL, QUEUE_FAMILIES } from '../metrics/names.js';
import { metricsOf } from '../promql/expr.js';
import type { InputPlans } from '../promql/input-plans.js';
import { formatDuration } from '../promql/render.js';
import type { InstantVector, Labels } from '../promql/vector.js';
import { type TargetState, targetName } from '../sources/target-state.js';
import type { DiagnosisBackend } from './backend.js';
import { type RuleOverrides, type RuleSettings, ruleSettingsForQueue } from './catalog.js';
import { type CheckResult, type ConditionCheck, checkConditions, EvaluationMemory } from './holding.js';
import { identityOf, type QueueIdentity, queueKey, scopeKey } from './identity.js';
import { type DataSpan, ESSENTIAL_SIGNALS, unjudgedRules } from './judgement.js';
import { type ObservationSettings, observationSettings } from './observation.js';
import { OBSERVATIONS } from './observations/index.js';
import {
  compareQueues,
  type Finding,
  isFiring,
  type Observation,
  type QueueReport,
  type QueueStatus,
  type Report,
  type ReportError,
  type UnknownRule,
} from './report.js';
import {
  type ConditionDefinition,
  conditionHeld,
  type DiagnosisRule,
  EVALUATION_INTERVAL_MS,
  type SignalSnapshot,
  type TargetFacts,
  type TextContext,
  type ThresholdValues,
} from './rule.js';
import { runbookUrl } from './runbook.js';
import { REPORTED_SIGNALS, SIGNAL_WINDOW_MS, type SignalDefinition, signal } from './signals.js';
import type { SignalValue } from './units.js';

/** Observations take no overrides: their defaults are in force everywhere. */
const OBSERVATION_SETTINGS: readonly ObservationSettings[] = OBSERVATIONS.map(observationSettings);

export type DiagnoseOptions = {
  readonly atMs: number;
  readonly runbookBaseUrl: string;
  readonly overrides?: RuleOverrides;
  readonly stepMs?: number;
  /**
   * Earliest time with data (a live history's or a recording's first sample): no condition holds before it,
   * so a `for` longer than the history leaves a finding pending, and a rule whose range the history does not
   * span is `unknown` unless its condition holds. Undefined where the source cannot tell (Prometheus).
   */
  readonly historyStartMs?: number;
  /**
   * How much history the source keeps behind its newest sample (a live history's retention); undefined where it
   * keeps everything. A rule whose range is longer reads its windows only partly however long ago the history
   * started, and is `unknown` unless its condition holds.
   */
  readonly historyKeptMs?: number;
  /** Targets the caller scraped or replayed: targets without queues, standby replicas and scrape errors. */
  readonly targets?: readonly TargetState[];
  /**
   * Kept across evaluations of one source (the service): the conditions' steps whose data has not changed are
   * not evaluated again, and findings still holding keep their `since` (holding.ts).
   */
  readonly memory?: EvaluationMemory;
  /**
   * Once aborted, the diagnosis rejects soon with the signal's reason (the service is stopping); the in-process
   * backend also yields to the event loop between expressions.
   */
  readonly signal?: AbortSignal;
};

type QueueEntry = { identity: QueueIdentity; key: string; settings?: RuleSettings[] };

export async function diagnose(backend: DiagnosisBackend, options: DiagnoseOptions): Promise<Report> {
  const at = options.atMs;
  const step = options.stepMs ?? EVALUATION_INTERVAL_MS;
  const overrides = options.overrides ?? {};
  const lookbackFrom = at - SIGNAL_WINDOW_MS;

  const memory = options.memory ?? new EvaluationMemory({ carried: false });
  const presence: Presence = {
    labels: await metricPresence(backend, lookbackFrom, at, options.signal),
    derived: memory.listedSeries,
  };
  const queues = discoverQueues(presence);

  const queueReports: QueueReport[] = [];
  const errors: ReportError[] = [];
  const findingsByQueue = new Map<string, Finding[]>();
  const silenced = new Set<string>();

  for (const queue of queues) {
    const { settings, silenced: isSilenced } = ruleSettingsForQueue(overrides, queue.identity);
    if (isSilenced) silenced.add(queue.key);
    findingsByQueue.set(queue.key, []);
    queue.settings = settings;
  }

  // Queue-scope rules, grouped by the thresholds in force so each distinct condition is evaluated once.
  const groups = new Map<string, { settings: RuleSettings; queues: QueueEntry[] }>();
  for (const queue of queues) {
    for (const s of queue.settings ?? []) {
      if (!s.enabled || s.rule.scope !== 'queue') continue;
      const groupKey = `${s.rule.id}\u0000${JSON.stringify(s.thresholds)}\u0000${s.forMs}`;
      let group = groups.get(groupKey);
      if (group === undefined) {
        group = { settings: s, queues: [] };
        groups.set(groupKey, group);
      }
      group.queues.push(queue);
    }
  }
  const targetRules = ruleSettingsForQueue(overrides, { name: null, controller: null }).settings.filter(
    (s) => s.enabled && s.rule.scope === 'target',
  );

  // Every condition, and at `at` the report's signals, in one pass (holding.ts).
  const byQueue = (labels: Labels) => queueKey(labels);
  const checks: ConditionCheck[] = [
    ...[...groups.values()].map(({ settings }) => ({ settings, keyOf: byQueue, traceSince: true })),
    ...OBSERVATION_SETTINGS.map((settings) => ({ settings, keyOf: byQueue, traceSince: false })),
    ...targetRules.map((settings) => ({ settings, keyOf: (l: Labels) => targetName(l), traceSince: true })),
  ];
  memory.begin(backend, at);
  const { results, atVectors } = await checkConditions(
    backend,
    checks,
    [...REPORTED_SIGNALS.map((s) => s.expr), signal('leaderStatus').expr],
    {
      at,
      step,
      phase: (await backend.gridPhase?.(step, at, options.signal)) ?? 0,
      memory,
      ...(options.historyStartMs !== undefined ? { historyStartMs: options.historyStartMs } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    },
  );
  const signals = signalSnapshots(atVectors, queues, presence);
  const groupResults = results.slice(0, groups.size);
  const observationResults = results.slice(groups.size, groups.size + OBSERVATION_SETTINGS.length);
  const targetResults = results.slice(groups.size + OBSERVATION_SETTINGS.length);

  [...groups.values()].forEach(({ settings, queues: members }, index) => {
    const result = groupResults[index];
    for (const queue of members) {
      const sinceMs = result?.since.get(queue.key);
      if (sinceMs === undefined) continue;
      const snapshot = signals.get(queue.key) ?? {};
      const pending = result?.keys.has(queue.key) === true ? undefined : { firesAtMs: sinceMs + settings.forMs };
      findingsByQueue
        .get(queue.key)
        ?.push(buildFinding(settings, snapshot, sinceMs, options.runbookBaseUrl, { ...(pending ? { pending } : {}) }));
    }
  });
  const span: DataSpan = {
    atMs: at,
    ...(options.historyStartMs !== undefined ? { historyStartMs: options.historyStartMs } : {}),
    ...(options.historyKeptMs !== undefined ? { keptMs: options.historyKeptMs } : {}),
  };

  const observationsByQueue = queueObservations(queues, signals, findingsByQueue, observationResults);

  for (const queue of queues) {
    if (silenced.has(queue.key)) continue;
    const snapshot = signals.get(queue.key) ?? {};
    const findings = findingsByQueue.get(queue.key) ?? [];
    const unknown = unjudgedRules(queue.settings ?? [], new Set(findings.map((f) => f.rule)), snapshot, span);
    queueReports.push({
      id: queue.identity.id,
      queue: { target: queue.identity.target, name: queue.identity.name, controller: queue.identity.controller },
      status: queueStatus(findings, snapshot, unknown.length > 0),
      findings: findings.sort(compareFindings),
      signals: snapshot,
      observations: observationsByQueue.get(queue.key) ?? [],
      unknown,
    });
  }

  const leader = atVectors[REPORTED_SIGNALS.length] ?? [];
  queueReports.push(
    ...targetReports(options, presence, queues, { rules: targetRules, results: targetResults, leader }, errors),
  );
  queueReports.sort(compareQueues);
  return {
    evaluatedAt: new Date(at).toISOString(),
    window: formatDuration(SIGNAL_WINDOW_MS),
    queues: queueReports,
    errors,
  };
}

// ---- queues and presence ----

/**
 * The label sets of every metric the signals and rules read, seen over the signal window, and what is derived
 * from them, kept while the same series are listed (`EvaluationMemory.listedSeries`), under keys that name what
 * it is (a fixed name, or a kind's prefix and what it is of).
 */
type Presence = { readonly labels: ReadonlyMap<string, readonly Labels[]>; readonly derived: InputPlans<string> };

const NO_LABEL_SETS: readonly Labels[] = [];

/** Label sets of every metric the signals and rules read, seen over the signal window. */
async function metricPresence(
  backend: DiagnosisBackend,
  fromMs: number,
  toMs: number,
  signal: AbortSignal | undefined,
): Promise<Map<string, readonly Labels[]>> {
  const names = new Set<string>(QUEUE_FAMILIES);
  for (const s of REPORTED_SIGNALS) for (const m of metricsOf(s.expr)) names.add(m);
  const presence = new Map<string, readonly Labels[]>();
  await Promise.all(
    [...names].map(async (name) => {
      presence.set(name, await backend.seriesLabels(name, fromMs, toMs, signal));
    }),
  );
  return presence;
}

/** The label sets of each queue family's series: what the queues are discovered from. */
function queueFamilyLists(presence: Presence): (readonly Labels[])[] {
  return QUEUE_FAMILIES.map((metric) => presence.labels.get(metric) ?? NO_LABEL_SETS);
}

function discoverQueues(presence: Presence): QueueEntry[] {
  const lists = queueFamilyLists(presence);
  const discovered = presence.derived.of('queues', lists, () => {
    const byKey = new Map<string, { readonly key: string; readonly identity: QueueIdentity }>();
    for (const list of lists) {
      for (const labels of list) {
        const key = queueKey(labels);
        if (!byKey.has(key)) byKey.set(key, { key, identity: identityOf(labels) });
      }
    }
    return [...byKey.values()];
  });
  return discovered.map(({ key, identity }) => ({ key, identity }));
}

// ---- signals ----

/** Each queue's reported signals, from their vectors at the evaluation time (in `REPORTED_SIGNALS` order). */
function signalSnapshots(
  vectors: readonly InstantVector[],
  queues: readonly QueueEntry[],
  presence: Presence,
): Map<string, Record<string, SignalValue>> {
  const out = new Map<string, Record<string, SignalValue>>(queues.map((q) => [q.key, {}]));
  const presentByScope = new Map<string, ReadonlySet<string>>();
  const boundsByHistogram = new Map<string, ReadonlyMap<string, number>>();
  REPORTED_SIGNALS.forEach((definition, index) => {
    const { scope } = definition;
    const vector = vectors[index] ?? [];
    const sampleKeys = presence.derived.of(
      `signal ${definition.id}`,
      [vector],
      () => vector.map((sample) => scopeKey(sample.labels, scope)),
      true,
    );
    const byScopeKey = new Map<string, number>();
    vector.forEach((sample, i) => {
      byScopeKey.set(sampleKeys[i] as string, sample.value);
    });
    const present = presentKeys(definition, presence, presentByScope);
    const histogram = definition.quantileOf;
    let topBounds: ReadonlyMap<string, number> | undefined;
    if (histogram !== undefined) {
      topBounds = boundsByHistogram.get(histogram) ?? highestFiniteBounds(histogram, presence);
      boundsByHistogram.set(histogram, topBounds);
    }
    // The queues are discovered from the queue families' series (`discoverQueues`), so their keys are kept with them.
    const queueKeys = presence.derived.of(`queue keys ${scope}`, queueFamilyLists(presence), () =>
      queues.map((queue) => scopeKey(queue.identity.labels, scope)),
    );
    for (const [queueIndex, queue] of queues.entries()) {
      const key = queueKeys[queueIndex] as string;
      const value = byScopeKey.get(key);
      const record = out.get(queue.key);
      if (record === undefined) continue;
      record[definition.id] = toSignalValue(definition, value, present.has(key), topBounds?.get(queue.key));
    }
  });
  return out;
}

/**
 * Keys (at the signal's scope) of the series for which every metric the signal reads exists. `known` keeps
 * each metric's keys by scope for the other signals of the evaluation.
 */
function presentKeys(
  definition: SignalDefinition,
  presence: Presence,
  known: Map<string, ReadonlySet<string>>,
): ReadonlySet<string> {
  let keys: ReadonlySet<string> | undefined;
  for (const metric of metricsOf(definition.expr)) {
    const id = `${definition.scope} ${metric}`;
    let these = known.get(id);
    if (these === undefined) {
      const list = presence.labels.get(metric) ?? NO_LABEL_SETS;
      these = presence.derived.of(
        `present ${id}`,
        [list],
        () => new Set(list.map((l) => scopeKey(l, definition.scope))),
      );
      known.set(id, these);
    }
    const inThese = these;
    keys = keys === undefined ? these : new Set([...keys].filter((k) => inThese.has(k)));
  }
  return keys ?? new Set();
}

function highestFiniteBounds(histogram: string, presence: Presence): ReadonlyMap<string, number> {
  const buckets = presence.labels.get(`${histogram}_bucket`) ?? NO_LABEL_SETS;
  return presence.derived.of(`highest bounds ${histogram}`, [buckets], () => {
    const out = new Map<string, number>();
    for (const labels of buckets) {
      const bound = Number(labels[LABEL.le]);
      if (!Number.isFinite(bound)) continue;
      const key = queueKey(labels);
      out.set(key, Math.max(out.get(key) ?? Number.NEGATIVE_INFINITY, bound));
    }
    return out;
  });
}

function toSignalValue(
  definition: SignalDefinition,
  value: number | undefined,
  present: boolean,
  topBound: number | undefined,
): SignalValue {
  if (value === undefined || Number.isNaN(value)) {
    return { value: null, unit: definition.unit, missing: present ? 'insufficient_data' : 'metric_absent' };
  }
  if (!Number.isFinite(value)) return { value: null, unit: definition.unit, missing: 'insufficient_data' };
  if (topBound !== undefined && value >= topBound) return { value: topBound, unit: definition.unit, bound: 'ge' };
  return { value, unit: definition.unit };
}

// ---- rules and observations ----

/** A finding of a rule; `pending` when its condition holds but its `for` has not elapsed. */
function buildFinding(
  settings: RuleSettings,
  snapshot: SignalSnapshot,
  sinceMs: number | null,
  runbookBase: string,
  options: { readonly detail?: string; readonly pending?: { readonly firesAtMs: number } } = {},
): Finding {
  const r: DiagnosisRule = settings.rule;
  const { context, evidence } = evidenceOf(r, snapshot, settings.thresholds, options.detail);
  return {
    rule: r.id,
    severity: r.severity,
    since: sinceMs === null ? null : new Date(sinceMs).toISOString(),
    summary: r.text.summary(context),
    evidence,
    cause: r.text.cause(context),
    fix: r.text.fix(context),
    runbook: runbookUrl(runbookBase, r.id),
    ...(options.pending === undefined
      ? { state: 'firing' as const }
      : { state: 'pending' as const, firesAt: new Date(options.pending.firesAtMs).toISOString() }),
  };
}

/**
 * Observations of every queue: each holding for its `for` (the same check as the rules'), except where a
 * rule in its `supersededBy` already has a finding for the queue. In `OBSERVATIONS` order.
 */
function queueObservations(
  queues: readonly QueueEntry[],
  signals: ReadonlyMap<string, SignalSnapshot>,
  findingsByQueue: ReadonlyMap<string, readonly Finding[]>,
  held: readonly CheckResult[],
): Map<string, Observation[]> {
  const out = new Map<string, Observation[]>(queues.map((q) => [q.key, []]));
  OBSERVATION_SETTINGS.forEach((settings, index) => {
    const { observation } = settings;
    for (const queue of queues) {
      if (!held[index]?.keys.has(queue.key)) continue;
      const findings = findingsByQueue.get(queue.key) ?? [];
      if (findings.some((f) => isFiring(f) && observation.supersededBy?.includes(f.rule))) continue;
      const { context, evidence } = evidenceOf(observation, signals.get(queue.key) ?? {}, settings.thresholds);
      out.get(queue.key)?.push({ id: observation.id, summary: observation.text.summary(context), evidence });
    }
  });
  return out;
}

/**
 * The evidence a rule or an observation reports (its evidence signals, then what it derives), and the
 * context its texts read (every signal and the derived values).
 */
function evidenceOf(
  definition: Pick<ConditionDefinition, 'evidence' | 'derive'>,
  snapshot: SignalSnapshot,
  thresholds: ThresholdValues,
  detail?: string,
): { context: TextContext; evidence: Record<string, SignalValue> } {
  const derived = definition.derive?.(snapshot, thresholds) ?? {};
  const signals = { ...snapshot, ...derived };
  const context = detail === undefined ? { signals, thresholds } : { signals, thresholds, detail };
  const evidence: Record<string, SignalValue> = {};
  for (const id of definition.evidence) {
    const value = signals[id];
    if (value !== undefined) evidence[id] = value;
  }
  Object.assign(evidence, derived);
  return { context, evidence };
}

/** Firing before pending, then critical before warning. */
function compareFindings(a: Finding, b: Finding): number {
  const rank = (f: Finding) => (isFiring(f) ? 2 : 0) + (f.severity === 'critical' ? 1 : 0);
  return rank(b) - rank(a);
}

function queueStatus(findings: readonly Finding[], snapshot: SignalSnapshot, unknown: boolean): QueueStatus {
  const firing = findings.filter(isFiring);
  if (firing.some((f) => f.severity === 'critical')) return 'critical';
  if (firing.length > 0) return 'warning';
  if (findings.length > 0) return 'pending';
  if (unknown || ESSENTIAL_SIGNALS.some((id) => snapshot[id]?.value == null)) return 'unknown';
  return 'ok';
}

// ---- targets: standby, scrape errors, target-scope rules ----

function targetReports(
  options: DiagnoseOptions,
  presence: Presence,
  queues: readonly QueueEntry[],
  evaluated: {
    readonly rules: readonly RuleSettings[];
    readonly results: readonly CheckResult[];
    readonly leader: InstantVector;
  },
  errors: ReportError[],
): QueueReport[] {
  const reports: QueueReport[] = [];
  const targetsWithQueues = new Set(queues.map((q) => q.identity.target));
  const known = new Map<string, TargetState>();
  for (const t of options.targets ?? []) known.set(t.name, t);
  const listed = new Set(known.keys());
  // Targets seen in any series (Prometheus mode learns them here).
  for (const target of seenTargets(presence)) if (!known.has(target.name)) known.set(target.name, target);
  const targetRules = evaluated.rules;
  const leaderByTarget = new Map<string, number>();
  for (const sample of evaluated.leader) leaderByTarget.set(targetName(sample.labels), sample.value);
  const reconciles = presence.labels.get(CONTROLLER_RUNTIME.reconcileTotal) ?? NO_LABEL_SETS;
  const reconcileTargets = presence.derived.of(
    'reconciling targets',
    [reconciles],
    () => new Set(reconciles.map((l) => targetName(l))),
  );

  for (const target of known.values()) {
    // A target that failed is reported as an error even while its queues still show recent data.
    if (target.error !== undefined) {
      errors.push({ target: target.name, code: target.error.code, message: target.error.message });
    }
    const hasQueues = targetsWithQueues.has(target.name);
    const identity = { target: target.name, name: null, controller: null };
    const id = identityOf({ ...target.labels }).id;
    const base = { id, queue: identity, observations: [] };
    // The target rules judge standby replicas too: their conditions exclude a standby themselves (so the alerts
    // do), and the report says `standby` only when none of them finds anything.
    const standby = target.error === undefined && leaderByTarget.get(target.name) === 0;
    const findings: Finding[] = [];
    const unknown: UnknownRule[] = [];
    targetRules.forEach((ruleSettings, index) => {
      // A target rule finds something only once its condition has held for its whole `for` (firing), as its alert
      // fires; holding for less (pending) is not a finding.
      const result = evaluated.results[index];
      const since = result?.keys.has(target.name) === true ? result.since.get(target.name) : undefined;
      const facts: TargetFacts = {
        ...(target.error !== undefined ? { error: target.error } : {}),
        ...(since !== undefined ? { holdingSinceMs: since } : {}),
        hasControllerMetrics: reconcileTargets.has(target.name),
        listed: listed.has(target.name),
        hasQueues,
        standby,
      };
      const { rule } = ruleSettings;
      const assessment = (rule.assessTarget ?? conditionHeld)(facts);
      if (assessment?.kind === 'finding')
        findings.push(
          buildFinding(ruleSettings, {}, assessment.sinceMs, options.runbookBaseUrl, {
            ...(assessment.detail !== undefined ? { detail: assessment.detail } : {}),
          }),
        );
      else if (assessment?.kind === 'unknown') unknown.push({ rule: rule.id, reason: assessment.reason });
    });
    if (findings.length > 0) {
      reports.push({
        ...base,
        status: queueStatus(findings, {}, false),
        findings: findings.sort(compareFindings),
        signals: {},
        unknown: [],
      });
    } else if (hasQueues) {
      // Nothing found on the target itself: its queues speak for it.
    } else if (standby) {
      reports.push({ ...base, status: 'standby', findings: [], signals: {}, unknown: [] });
    } else if (unknown.length > 0) {
      reports.push({ ...base, status: 'unknown', findings: [], signals: {}, unknown });
    }
  }
  return reports;
}

/** The targets of every series listed, each once, in order of first appearance. */
function seenTargets(presence: Presence): readonly TargetState[] {
  const lists = [...presence.labels.values()];
  return presence.derived.of('seen targets', lists, () => {
    const seen = new Map<string, TargetState>();
    for (const labelSets of lists) {
      for (const labels of labelSets) {
        const name = targetName(labels);
        if (!seen.has(name))
          seen.set(name, { name, labels: { job: labels.job ?? '', instance: labels.instance ?? '' } });
      }
    }
    return [...seen.values()];
  });
}
