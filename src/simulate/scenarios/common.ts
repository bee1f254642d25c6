/**
 * Building blocks shared by the scenarios: parameter resolution, common reconcile models, and the
 * capacity arithmetic that ground truths are computed from.
 */
import { DEFAULT_BACKGROUND } from '../background.js';
import { PollingRoles } from '../controller-background.js';
import { type DurationDist, meanMs, sampler } from '../distributions.js';
import {
  type ControllerSpec,
  type DiagnosisId,
  type EventSpec,
  type Flavor,
  type QueueTruthSpec,
  type SimulationParams,
  SUCCESS,
  type SyncModelFactory,
} from '../model.js';

export interface Sizes {
  readonly workers: number;
  readonly keys: number;
  readonly rate: number;
}

/** The main controller's sizes: the scenario's defaults, overridden by the parameters. */
export function sizes(params: SimulationParams, defaults: Sizes): Sizes {
  return {
    workers: params.workers ?? defaults.workers,
    keys: params.keys ?? defaults.keys,
    rate: params.rate ?? defaults.rate,
  };
}

/**
 * Sizes of a queue whose arrival rate is set relative to what its workers complete: by default `load` ×
 * their capacity with syncs of `sync`, rounded to `rateDigits` decimals, so that it keeps its ratio to
 * capacity whatever `--workers` says.
 */
export interface LoadSizes {
  readonly workers: number;
  readonly keys: number;
  readonly sync: DurationDist;
  /** Arrivals over capacity. */
  readonly load: number;
  readonly rateDigits: number;
}

/** The scenario's defaults for `d`: its rate derived from the default workers. */
export function loadDefaults(d: LoadSizes): Sizes {
  return { workers: d.workers, keys: d.keys, rate: round(d.load * capacity(d.workers, d.sync), d.rateDigits) };
}

/**
 * The main controller's sizes for `d`, overridden by the parameters: its syncs (`syncMs` moves their median and
 * keeps their spread); the rate, unless given, derived from the workers and syncs; with the capacity of those
 * workers.
 */
export function loadSizes(
  params: SimulationParams,
  d: LoadSizes,
): Sizes & { readonly capacity: number; readonly sync: DurationDist } {
  const workers = params.workers ?? d.workers;
  const sync = withSyncMs(d.sync, params);
  const cap = capacity(workers, sync);
  return {
    workers,
    keys: params.keys ?? d.keys,
    rate: params.rate ?? round(d.load * cap, d.rateDigits),
    capacity: cap,
    sync,
  };
}

/**
 * `dist` moved to the median `--sync-ms` gives (`params.syncMs`), its spread kept: a log-normal sync time; `dist` itself
 * where none is given.
 */
export function withSyncMs(dist: DurationDist, params: Pick<SimulationParams, 'syncMs'>): DurationDist {
  if (params.syncMs === undefined) return dist;
  if (dist.kind !== 'lognormal') throw new Error(`a scenario's load syncs are log-normal, got ${dist.kind}`);
  return { ...dist, medianMs: params.syncMs };
}

/** The lease a process holds: kube-controller-manager's, or an operator's leader-election id. */
export function leaseName(flavor: Flavor, processName: string): string {
  return flavor === 'component-base' ? 'kube-controller-manager' : `${processName}-leader-election`;
}

/**
 * Syncs per second the default background adds, by the end of the run, to `controller` (its name seeds which of its
 * objects poll) whose events arrive at `eventRate`: the objects waiting on something outside (`pollingKeyShare` of
 * them, at most `pollingMaxKeys` on average; the seeded draw of the run, `PollingRoles`, not that average), each
 * polled with `RequeueAfter` at its own interval of 30 to 60 s once an event has first synced it, so only the share
 * of them an event has reached by then (each object sees an event every keys / eventRate seconds, or every one of
 * them at once where `initialList` syncs every object at the start); none with the background off. Part of the
 * offered load: on a few workers with syncs of seconds, twenty polls a minute keep most of a worker busy.
 */
export function backgroundPollsPerSecond(
  controller: Pick<ControllerSpec, 'name' | 'keys'>,
  eventRate: number,
  params: Pick<SimulationParams, 'background' | 'durationMs' | 'seed'>,
  initialList = false,
): number {
  const keys = controller.keys;
  if (params.background === 'off' || keys <= 0) return 0;
  // An initial list syncs every object at the start: every polling object is reached at once.
  const reached = initialList ? 1 : 1 - Math.exp(-(eventRate * (params.durationMs / SECOND)) / keys);
  return new PollingRoles(controller, params.seed, DEFAULT_BACKGROUND).pollsPerSecond(keys) * reached;
}

/** Share of the syncs of a real change that write the object's status (`steadySync`'s `writeOnChange`) in the list and batch scenarios. */
export const LIST_STATUS_WRITE_SHARE = 0.1;

/** Syncs per second that real changes at `rate` ask for when a share `writeShare` of them writes status: each write's echo is one more sync. */
export function changeLoad(rate: number, writeShare: number): number {
  return rate * (1 + writeShare);
}

/** The Event a sync records: created, then patched with a higher count when the same one repeats. */
export const RECORDED_EVENT = { method: 'POST', code: '201' } as const;
/** A further write of a sync: an update of an object the controller does not watch (no event comes back). */
export const UNWATCHED_UPDATE = { method: 'PATCH', code: '200' } as const;

/** Syncs per second `workers` workers complete when every sync takes `dist`. */
export function capacity(workers: number, dist: DurationDist): number {
  return (workers * 1000) / meanMs(dist);
}

/**
 * Seconds a list of every one of `keys` objects takes to drain while changes spread evenly over those objects arrive
 * at `arrivals` per second and the workers complete `capacity` per second. A change to a key still waiting is
 * absorbed by it (the classic queue's dirty set; the priority queue lifts the key to priority 0), so only changes to
 * keys already worked off add to the depth: it falls at capacity − arrivals × (1 − depth / keys), the whole
 * throughput at first and (1 − utilization) of it at the end, and reaches zero after
 * (keys / arrivals) × ln(1 / (1 − utilization)): for a trickle of changes, keys / capacity. Infinite at or over
 * capacity.
 */
export function listDrainSeconds(keys: number, arrivals: number, capacity: number): number {
  if (arrivals >= capacity) return Number.POSITIVE_INFINITY;
  if (arrivals <= 0) return keys / capacity;
  return (keys / arrivals) * Math.log(1 / (1 - arrivals / capacity));
}

/**
 * A list's work with the informer's relist (`relistAtSeconds`, an expired watch) in it: the relist queues again every
 * object no longer waiting (those worked off by then; all of them once the list is gone), which take about as long
 * again to work off, so the queue's work ends about the relist's time after the list's. Returns the time the work
 * ends, the words for the truth's note (empty without a relist) and the informer's `relistAtMs`.
 */
export function relistedList(
  listSeconds: number,
  params: Pick<SimulationParams, 'relistAtSeconds'>,
): { drainSeconds: number; note: string; events: { relistAtMs?: number } } {
  const relist = params.relistAtSeconds;
  if (relist === undefined) return { drainSeconds: listSeconds, note: '', events: {} };
  const drainSeconds = listSeconds + relist;
  const relisted = `; every object is relisted at ${round(relist / 60, 1)} minutes (an expired watch) and queued again`;
  return {
    drainSeconds,
    // A list that is never worked off (arrivals at or over capacity) has no end for the relist to move.
    note: Number.isFinite(drainSeconds)
      ? `${relisted}, so the queue's work ends after about ${Math.round(drainSeconds / 60)} minutes`
      : relisted,
    events: { relistAtMs: relist * SECOND },
  };
}

/**
 * How long a load must have held before anyone calls it sustained: a quarter of an hour, the span over which a
 * capacity reading averages (minutes of everyday bursts and lulls level out). After a list drains, the load that
 * follows is judged once it has held that long.
 */
const SUSTAINED_LOAD_MS = 15 * 60_000;

/** Offered load from which `capacityTruth` finds saturation acceptable. */
const BUSY_ENOUGH_FOR_SATURATION = 0.85;
/** The longest window a rule reads (the backlog's half-hour depth growth): a drained list is out of it after this. */
export const LONGEST_RULE_WINDOW_MS = 30 * 60_000;

/**
 * Ground truth of a queue working off a list of `keys` (an informer's initial list) while arrivals take
 * `utilization` × its capacity: `capacityTruth` of the arrivals once the list is gone, and while it lasts every
 * worker is busy and the depth never drains. Where arrivals alone are busy enough for saturation to be acceptable
 * (from 0.85, `capacityTruth`), the list falls at the end at 15% of the throughput or less (`listDrainSeconds`):
 * saturation and a backlog are too close to call until it is gone, whatever the flavor. Both are allowed up to the
 * end of the drain plus the longest window a rule reads (30 minutes), unless the arrivals allow them anyway; what
 * the arrivals owe is owed once their load has held a quarter of an hour past the drain (`SUSTAINED_LOAD_MS`),
 * since until then every worker was busy with the list, not with them. `drainSeconds` is when the list is gone;
 * `listNote` says so.
 */
export function listDrainTruth(
  utilization: number,
  drainSeconds: number,
  params: Pick<SimulationParams, 'flavor'>,
  listNote: string,
): QueueTruthSpec {
  const arrivals = capacityTruth(utilization, params);
  const truth = { ...arrivals, note: `${arrivals.note}; ${listNote}` };
  if (utilization < BUSY_ENOUGH_FOR_SATURATION || utilization >= 1) return truth;
  const allowed = [...new Set<DiagnosisId>([...truth.allowed, 'WorkqueueBacklog', 'WorkqueueSaturated'])];
  const until =
    truth.allowed.length === 0 && Number.isFinite(drainSeconds)
      ? { allowedUntilMs: drainSeconds * SECOND + LONGEST_RULE_WINDOW_MS }
      : {};
  const owedFrom =
    truth.expected.length > 0 && Number.isFinite(drainSeconds)
      ? { onsetMs: drainSeconds * SECOND + SUSTAINED_LOAD_MS }
      : {};
  return {
    ...truth,
    allowed,
    ...until,
    ...owedFrom,
    note: `${truth.note}; the list falls to ${Math.round((1 - utilization) * 100)}% of the throughput at its end, every worker busy until it is gone`,
  };
}

/**
 * Ground truth of a queue whose offered load is `utilization` × its capacity (arrivals over
 * completions a full set of workers could sustain):
 * ≥ 1.1 a backlog (saturation beside it is fair); 1.0–1.1 too close to call either way; 0.9–1.0
 * saturated; 0.85–0.9 busy enough that saturation is acceptable; below, nothing.
 *
 * Saturation is busy workers against the configured maximum, which only controller-runtime exposes
 * (`controller_runtime_max_concurrent_reconciles`): in the component-base flavor the truth says so and
 * expects nothing where an SRE with those metrics could not tell either.
 */
export function capacityTruth(utilization: number, params: Pick<SimulationParams, 'flavor'>): QueueTruthSpec {
  const u = round(utilization, 3);
  // Without the max-workers metric, saturation is told only when the depth never drains (every worker busy all
  // along): allowed from 90% busy, never required, since a queue at 93% still drains now and then.
  const measured = exposesMaxWorkers(params.flavor);
  const saturation: DiagnosisId[] = measured ? ['WorkqueueSaturated'] : [];
  const blind = measured
    ? ''
    : '; without a max-workers metric saturation is told only from a depth that never drains, which this load need not show';
  if (utilization >= 1.1) {
    return {
      expected: ['WorkqueueBacklog'],
      allowed: ['WorkqueueSaturated'],
      note: `arrivals are ${u}× what the workers can complete: depth grows`,
    };
  }
  if (utilization >= 1.0) {
    return {
      expected: [],
      allowed: ['WorkqueueBacklog', 'WorkqueueSaturated'],
      note: `arrivals are ${u}× capacity: depth creeps up slowly${blind}`,
    };
  }
  if (utilization >= 0.9) {
    return {
      expected: saturation,
      allowed: measured ? ['WorkqueueBacklog'] : ['WorkqueueBacklog', 'WorkqueueSaturated'],
      note: `workers are ${Math.round(u * 100)}% busy: queue latency is high while depth stays bounded${blind}`,
    };
  }
  if (utilization >= BUSY_ENOUGH_FOR_SATURATION) {
    return {
      expected: [],
      allowed: saturation,
      note: `workers are ${Math.round(u * 100)}% busy: close to saturation`,
    };
  }
  return { expected: [], allowed: [], note: `workers are ${Math.round(u * 100)}% busy` };
}

/**
 * `capacityTruth` of a load that rises over the run from `from` to `to` × capacity (the background's polled
 * objects join the load as events first reach them): what both ends expect is expected, what either end expects
 * or allows is allowed, since the rules read windows of minutes of a load still moving.
 */
export function risingCapacityTruth(
  from: number,
  to: number,
  params: Pick<SimulationParams, 'flavor'>,
): QueueTruthSpec {
  const start = capacityTruth(from, params);
  if (round(to, 3) === round(from, 3)) return start;
  const end = capacityTruth(to, params);
  const expected = start.expected.filter((id) => end.expected.includes(id));
  const allowed = [...new Set([...start.expected, ...start.allowed, ...end.expected, ...end.allowed])].filter(
    (id) => !expected.includes(id),
  );
  return {
    expected,
    allowed,
    note: `${start.note}; polled objects raise the load to ${round(to, 3)}× capacity by the end: ${end.note}`,
  };
}

/**
 * A backlog is changes reconciled late. Once its depth stands (deduplication caps it), a key waits the standing
 * depth over the completion rate. Five seconds is late: it is the whole budget of Kubernetes' own latency
 * objectives for an object to be acted on (pod start-up, 5 s at the 99th percentile), spent waiting in one queue.
 * A standing queue whose keys wait a second is a full set of workers keeping up with every object, however many
 * events coalesce: saturated, not behind.
 */
export const LATE_WAIT_S = 5;

/**
 * Ground truth of an overloaded queue over `keys` objects with uniformly spread events: `capacityTruth`, except
 * where deduplication levels the depth off early in the run and keys then wait less than `LATE_WAIT_S`. With
 * arrivals `rate` and completions `capacityPerSecond`, a waiting key absorbs the events for it, so the depth
 * rises toward keys × (1 − capacity / rate) with the time constant keys / rate. A depth that has had three time
 * constants (95% of its ceiling) in the run stands; its keys wait ceiling / capacity. Standing short, the queue is
 * saturated, not behind: a backlog is allowed only where the depth's excursions could make its keys late, three of
 * its spreads above its level (`NEVER_DRAINED_SPREADS`, never reached over a run) waiting `LATE_WAIT_S` or more;
 * where even they wait less, no change is reconciled late and a backlog is forbidden. `overloadedForMs`: how long
 * of the run the arrivals exceed capacity (the whole run unless the load ramps up).
 */
export function overloadTruth(
  sizes: { readonly keys: number; readonly rate: number; readonly capacity: number },
  params: Pick<SimulationParams, 'flavor' | 'durationMs'>,
  overloadedForMs = params.durationMs,
): QueueTruthSpec {
  const { keys, rate, capacity: cap } = sizes;
  const truth = capacityTruth(rate / cap, params);
  if (!truth.expected.includes('WorkqueueBacklog')) return truth;
  const ceiling = keys * (1 - cap / rate);
  const levelledOff = 3 * (keys / rate) * 1000 <= overloadedForMs;
  if (!levelledOff) return truth;
  const waitS = ceiling / cap;
  const standing = `arrivals are ${round(rate / cap, 3)}× capacity over ${keys} objects: deduplication holds the depth near ${Math.round(ceiling)} keys, each waiting ${round(waitS, 1)} s`;
  if (waitS >= LATE_WAIT_S) return { ...truth, note: `${standing}; changes are reconciled late` };
  const spread = Math.sqrt((keys * cap) / rate);
  // Even at its excursions keys wait under the line: never late, so never a backlog.
  const neverLate = (ceiling + NEVER_DRAINED_SPREADS * spread) / cap < LATE_WAIT_S;
  const note = `${standing}; the workers are saturated, no change is reconciled late${neverLate ? `, even ${NEVER_DRAINED_SPREADS} spreads (${Math.round(NEVER_DRAINED_SPREADS * spread)} keys) above that level: not a backlog` : ''}`;
  const notBehind = (spec: QueueTruthSpec): QueueTruthSpec =>
    neverLate ? { ...spec, allowed: spec.allowed.filter((id) => id !== 'WorkqueueBacklog') } : spec;
  // Without the max-workers metric, a depth that stands clear of zero is what shows every worker busy all along.
  if (!exposesMaxWorkers(params.flavor) && ceiling >= NEVER_DRAINED_SPREADS * spread) {
    return notBehind({
      expected: ['WorkqueueSaturated'],
      allowed: ['WorkqueueBacklog'],
      note: `${note}; the depth never drains, so every worker is busy all along, which shows without a max-workers metric`,
    });
  }
  // Saturated, a backlog allowed where its keys could be late: the truth of a queue just under capacity.
  return notBehind({ ...capacityTruth(0.95, params), note });
}

/**
 * Share of the throughput at or above which a falling depth reads as a list being worked off: `listDrainTruth`'s
 * list ends falling at 15% of it, too close to call against a queue that holds its level.
 */
const LIST_FALL_SHARE = 1 - BUSY_ENOUGH_FOR_SATURATION;

/**
 * The truth of an overload (`overloadTruth`, `sizes`) whose informer relists every object at `relistAtSeconds`:
 * every object not already waiting is queued, so the depth jumps towards every object, and with no arrival counted
 * for a key that waits it falls back at the whole throughput at first; deduplication returns it to its balance,
 * keys × (1 − capacity / arrivals), with the time constant keys / arrivals. While it falls by more than 15% of
 * the throughput (`LIST_FALL_SHARE`: keys / arrivals × ln(1 / 0.15) after the relist) it is, to anyone reading the
 * depth, a list being worked off. A backlog the overload (from the start) has sustained for a quarter of an hour
 * (`SUSTAINED_LOAD_MS`) before the relist stays owed through that fall, its keys waiting all along; one the relist
 * lands on sooner is owed from the fall's end. Without a relist `truth` is returned; without a backlog owed, its note
 * gains the relist.
 */
export function relistedOverloadTruth(
  truth: QueueTruthSpec,
  sizes: { readonly keys: number; readonly rate: number },
  params: Pick<SimulationParams, 'relistAtSeconds'>,
): QueueTruthSpec {
  if (params.relistAtSeconds === undefined) return truth;
  const relistMs = params.relistAtSeconds * SECOND;
  // An overload is never worked off: the relist's words without an end of the work.
  const relisted = `${truth.note}${relistedList(Number.POSITIVE_INFINITY, params).note}`;
  if (!truth.expected.includes('WorkqueueBacklog')) return { ...truth, note: relisted };
  const fallMs = (sizes.keys / sizes.rate) * Math.log(1 / LIST_FALL_SHARE) * SECOND;
  const note = `${relisted}; the depth falls back to the balance in about ${Math.round(fallMs / MINUTE)} minutes`;
  if (relistMs >= SUSTAINED_LOAD_MS) return { ...truth, note: `${note}, a backlog all along` };
  return {
    ...truth,
    onsetMs: Math.max(truth.onsetMs ?? 0, relistMs + fallMs),
    note: `${note}, before the overload was sustained: owed from the end of that fall`,
  };
}

/**
 * How far clear of zero, in its own spread, a deduplicated standing depth stays over a run: never drained. The
 * waiting keys come and go at random: each of the keys not waiting gets an event at rate / keys, and a worker takes
 * one at the capacity. Pulled back to its level at rate / keys per key of excess and pushed about by both streams
 * (twice the capacity), the depth strays from its level by sqrt(keys × capacity / rate); three of those is a
 * one-sided chance of about 1 in 700 per look, never reached in a run's scrapes, which follow each other closely.
 */
const NEVER_DRAINED_SPREADS = 3;

/**
 * The truth of a queue whose controller keeps failing: persistent failures where reconcile error metrics
 * tell failures from RequeueAfter polling (controller-runtime); where they are absent (component-base)
 * retries alone prove nothing, and the truth expects nothing (the queue gets an observation).
 */
export function failureTruth(params: Pick<SimulationParams, 'flavor'>, note: string): QueueTruthSpec {
  return exposesReconcileErrors(params.flavor)
    ? { expected: ['WorkqueuePersistentFailures'], allowed: [], note }
    : {
        expected: [],
        allowed: [],
        note: `${note}; not diagnosable here: without reconcile error metrics, retries cannot be told from RequeueAfter polling`,
      };
}

/** Whether a process of `flavor` counts reconcile errors (controller-runtime's reconcile metrics). */
export function exposesReconcileErrors(flavor: Flavor): boolean {
  return flavor === 'controller-runtime';
}

/** Whether a process of `flavor` exposes the configured number of workers (max concurrent reconciles). */
export function exposesMaxWorkers(flavor: Flavor): boolean {
  return flavor === 'controller-runtime';
}

/**
 * Joins truths of several causes in one queue: expected adds up; allowed keeps what is not expected; the
 * latest `onsetMs` and the earliest `allowedUntilMs` given hold for the whole.
 */
export function combineTruth(...truths: QueueTruthSpec[]): QueueTruthSpec {
  const expected = new Set<DiagnosisId>();
  const allowed = new Set<DiagnosisId>();
  for (const truth of truths) for (const id of truth.expected) expected.add(id);
  for (const truth of truths) for (const id of truth.allowed) if (!expected.has(id)) allowed.add(id);
  const notes = truths.map((truth) => truth.note).filter((note) => note !== undefined && note !== '');
  const from = truths.map((t) => t.onsetMs).filter((ms): ms is number => ms !== undefined);
  const until = truths.map((t) => t.allowedUntilMs).filter((ms): ms is number => ms !== undefined);
  return {
    expected: [...expected],
    allowed: [...allowed],
    note: notes.join('; '),
    ...(from.length === 0 ? {} : { onsetMs: Math.max(...from) }),
    ...(until.length === 0 ? {} : { allowedUntilMs: Math.min(...until) }),
  };
}

/**
 * A sync that always succeeds in `duration`; when an external change is seen, it writes the
 * object's status with probability `writeOnChange` (the echo of that write triggers one more sync,
 * which finds nothing new and writes nothing: the correct pattern).
 */
export function steadySync(
  duration: DurationDist,
  writeOnChange = 0,
  method: 'PUT' | 'PATCH' = 'PATCH',
): SyncModelFactory {
  return ({ rng }) => {
    const draw = sampler(duration, rng);
    const write = { durationMs: 0, result: SUCCESS, write: method };
    return (ctx) => {
      const durationMs = draw();
      if (writeOnChange > 0 && ctx.changed && rng.next() < writeOnChange) return { ...write, durationMs };
      return { durationMs, result: SUCCESS };
    };
  };
}

/** The first `count` keys, 0 to `count` − 1: an informer's initial list of every object, or the objects that start a fault. */
export function firstKeys(count: number): number[] {
  return Array.from({ length: count }, (_, k) => k);
}

/**
 * Events at `rate` spread evenly over `keys` objects, after the informer's initial list of every one of them (at low
 * priority on the priority queue) and a real change to each of the first `looping`, which starts their loop.
 */
export function listThenLoopEvents(rate: number, keys: number, looping: number): EventSpec {
  return { rate, keys: { kind: 'uniform' }, initialKeys: firstKeys(keys), changedKeys: firstKeys(looping) };
}

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export const SECOND = 1000;
export const MINUTE = 60_000;

/**
 * How long after a dependency recovers an on-call engineer accepts a failure warning still standing. Retries of
 * keys still in backoff succeed once it is back, so errors stop at the recovery; a monitor judging from rates
 * needs some minutes to see that they stopped, and a warning that clears within ten is read as the outage's
 * tail, one that stands longer as a false alarm.
 */
export const FAILURES_STOPPED_GRACE_MS = 10 * MINUTE;
