/**
 * The background of everyday noise every simulated process carries (what it is, its defaults with their
 * real-world reasons, how a scenario overrides it), and when a controller resyncs.
 */
import type { ControllerSpec } from './model.js';
import { Random } from './random.js';

/**
 * The everyday noise of a real controller process, which a diagnosis must not mistake for a problem.
 * `runVirtual`, the live simulations and `SimProcess` apply it to every controller of every scenario
 * unless the run's `background` parameter is `off`. Each component draws from its own `Random` stream
 * (labels `<controller>/background/<component>` and `background/<component>`), so adding, changing or
 * switching off one never shifts another's draws, nor the scenario's own.
 *
 * Controller-level components (a `ProcessSpec.background` sets them for all its controllers, a
 * `ControllerSpec.background` for one): `conflictShare`, `optionalGetShare`, `pollingKeyShare`,
 * `pollIntervalMs`, `resyncPeriodMs`. Process-level ones (only `ProcessSpec.background`, or the defaults):
 * `scrapeJitterMs`, `pauses`, `siblingTraffic`. Overrides are shallow: an object component is replaced
 * whole. A share or rate of 0, a jitter of 0 or `null` switches a component off.
 */
export interface BackgroundSpec {
  /**
   * Share of the syncs that would have succeeded (result success or RequeueAfter) whose status update is
   * rejected with 409 Conflict (`rest_client_requests_total{method="PUT",code="409"}`): the sync returns an
   * error (the controller's error path: `addRateLimited`), and the retry, on a fresh cache, succeeds.
   */
  readonly conflictShare: number;
  /**
   * Share of syncs that GET an optional object from the API server (not from the cache) and get 404: no
   * error. Cached reads are never counted: controller-runtime's client reads from the informer cache.
   */
  readonly optionalGetShare: number;
  /**
   * Share of keys "waiting on something external": every sync of them that would have succeeded returns
   * `RequeueAfter` (forget + addAfter) with the key's own interval drawn from `pollIntervalMs`.
   */
  readonly pollingKeyShare: number;
  /** At most this many keys poll, however many objects the controller has. */
  readonly pollingMaxKeys: number;
  /** Range of the polling keys' intervals, ms (uniform, fixed per key). */
  readonly pollIntervalMs: readonly [min: number, max: number];
  /**
   * Range of the informer resync period given to a controller whose scenario sets none (uniform, drawn
   * per controller; the first resync at a uniform phase within one period); `null`: none added. Scenarios
   * that set `events.resyncPeriodMs` keep theirs.
   */
  readonly resyncPeriodMs: readonly [min: number, max: number] | null;
  /** Controllers over this many objects get no background resync (they keep a resync of hours). */
  readonly resyncMaxKeys: number;
  /**
   * Recorded scrape times are the nominal grid plus a uniform offset in ±`scrapeJitterMs` (whole ms; at
   * most a quarter of the scrape interval, so scrapes stay in order; the first never before the start).
   */
  readonly scrapeJitterMs: number;
  /**
   * Whole-process stalls (CPU throttling, GC, a noisy node): every `everyMs` (uniform, from the end of the
   * last one) the process stops for `durationMs` (uniform). Workers take no new keys, and syncs due to end
   * during the stall end when it does. `null`: none.
   */
  readonly pauses: {
    readonly everyMs: readonly [min: number, max: number];
    readonly durationMs: readonly [min: number, max: number];
  } | null;
  /**
   * REST traffic of other controllers in the same process, tied to no simulated queue (Poisson): GETs
   * (`getNotFoundShare` of them 404, the rest 200) and writes (PATCH or PUT evenly; `writeConflictShare` of
   * them 409, the rest 200). `null`: none.
   */
  readonly siblingTraffic: {
    readonly getsPerSecond: number;
    readonly getNotFoundShare: number;
    readonly writesPerSecond: number;
    readonly writeConflictShare: number;
  } | null;
}

/** `default`: `DEFAULT_BACKGROUND` with the scenario's overrides; `off`: no background at all, overrides ignored. */
export type BackgroundMode = 'default' | 'off';
export const BACKGROUND_MODES: readonly BackgroundMode[] = ['default', 'off'];
export const DEFAULT_BACKGROUND_MODE: BackgroundMode = 'default';

const SECOND_MS = 1_000;
const MINUTE_MS = 60_000;

/** The background every simulated process has unless told otherwise; each number with its real-world reason. */
export const DEFAULT_BACKGROUND: BackgroundSpec = Object.freeze({
  // Optimistic concurrency: an Update carrying a resourceVersion that someone else (kubectl, another
  // controller, the kubelet on status, a mutating webhook) has moved on since the informer cache saw it is
  // answered 409. Controllers that write status see conflicts on one or two syncs in a hundred in steady
  // state; the standard answer is to return the error and let the rate-limited retry re-read the cache.
  conflictShare: 0.015,
  // Reconcilers look up objects that may legitimately be absent (a Secret or ConfigMap a spec may name, an
  // owned object not created yet) with an uncached client or APIReader; "not found" is a normal answer, not
  // an error, and it is counted as code 404 on every such sync.
  optionalGetShare: 1.0,
  // At any time a few objects wait on something outside the controller's reach (a cloud load balancer, a
  // certificate being issued, a volume attaching) and are polled with RequeueAfter: about one in fifty.
  pollingKeyShare: 0.02,
  // ... but a few at a time, not a share of a large population: the objects waiting on the outside world at
  // any moment are a handful (a load balancer being provisioned, a certificate being issued), whatever the
  // cluster's size.
  pollingMaxKeys: 20,
  // The fixed poll intervals controllers pick for such waits are 30 s to a minute (cert-manager, cloud
  // load-balancer and volume controllers).
  pollIntervalMs: Object.freeze([30 * SECOND_MS, 60 * SECOND_MS]) as readonly [number, number],
  // Operators commonly set a SyncPeriod / resync of 10 to 30 minutes (DESIGN.md §1) so that drift is repaired
  // even without events. (controller-runtime's own default is 10 h, kube-controller-manager's 12 to 24 h.)
  resyncPeriodMs: Object.freeze([10 * MINUTE_MS, 30 * MINUTE_MS]) as readonly [number, number],
  // ... but only where a full resync is cheap: an operator over tens of thousands of objects keeps the 10 h
  // default (re-adding 200,000 keys every 20 minutes would keep its workers busy for most of the period).
  resyncMaxKeys: 5_000,
  // Prometheus stamps a sample with the scrape's start; the start of each scrape drifts around the target's
  // fixed offset by scheduling delays of a loaded server or agent: about a second either way.
  scrapeJitterMs: SECOND_MS,
  pauses: Object.freeze({
    // CFS quota throttling of a container at its CPU limit, a large heap's GC with assists, or a noisy
    // neighbour stalls a busy Go process for a moment every few minutes on shared nodes ...
    everyMs: Object.freeze([2 * MINUTE_MS, 6 * MINUTE_MS]) as readonly [number, number],
    // ... for half a second to a few seconds.
    durationMs: Object.freeze([500, 3 * SECOND_MS]) as readonly [number, number],
  }),
  siblingTraffic: Object.freeze({
    // A manager runs more controllers than the ones under study (and webhooks, discovery refreshes, other
    // leases); their uncached reads add a steady trickle of GETs, ...
    getsPerSecond: 0.5,
    // ... some for objects that are gone (deleted between event and read): 5%, ...
    getNotFoundShare: 0.05,
    // ... and a few status updates and patches of their own, ...
    writesPerSecond: 0.1,
    // ... which meet the same optimistic-concurrency conflicts now and then: 1%.
    writeConflictShare: 0.01,
  }),
});

/** No background: what `--background off` runs. */
export const BACKGROUND_OFF: BackgroundSpec = Object.freeze({
  conflictShare: 0,
  optionalGetShare: 0,
  pollingKeyShare: 0,
  pollingMaxKeys: 0,
  pollIntervalMs: DEFAULT_BACKGROUND.pollIntervalMs,
  resyncPeriodMs: null,
  resyncMaxKeys: 0,
  scrapeJitterMs: 0,
  pauses: null,
  siblingTraffic: null,
});

/**
 * The background of a process (`overrides`: its `ProcessSpec.background`) or of one controller (then also
 * its `ControllerSpec.background`, applied last): `DEFAULT_BACKGROUND` with the overrides, or
 * `BACKGROUND_OFF` for mode `off`. Throws `RangeError` on a value out of range.
 */
export function resolveBackground(
  mode: BackgroundMode,
  ...overrides: readonly (Partial<BackgroundSpec> | undefined)[]
): BackgroundSpec {
  if (mode === 'off') return BACKGROUND_OFF;
  let spec: BackgroundSpec = DEFAULT_BACKGROUND;
  for (const override of overrides) {
    if (override === undefined) continue;
    const merged: Record<string, unknown> = { ...spec };
    for (const [name, value] of Object.entries(override)) if (value !== undefined) merged[name] = value;
    spec = merged as unknown as BackgroundSpec;
  }
  if (spec !== DEFAULT_BACKGROUND) checkBackground(spec);
  return spec;
}

function checkBackground(spec: BackgroundSpec): void {
  const fail = (what: string, value: unknown): never => {
    throw new RangeError(`background ${what} out of range: ${JSON.stringify(value)}`);
  };
  const share = (what: string, value: number): void => {
    if (!(value >= 0 && value <= 1)) fail(what, value);
  };
  const rate = (what: string, value: number): void => {
    if (!(value >= 0 && Number.isFinite(value))) fail(what, value);
  };
  const range = (what: string, value: readonly [number, number], positive: boolean): void => {
    const [min, max] = value;
    if (!(Number.isFinite(min) && Number.isFinite(max) && min <= max && (positive ? min > 0 : min >= 0))) {
      fail(what, value);
    }
  };
  share('conflictShare', spec.conflictShare);
  share('optionalGetShare', spec.optionalGetShare);
  share('pollingKeyShare', spec.pollingKeyShare);
  if (!(spec.pollingMaxKeys >= 0)) fail('pollingMaxKeys', spec.pollingMaxKeys);
  range('pollIntervalMs', spec.pollIntervalMs, true);
  if (spec.resyncPeriodMs !== null) range('resyncPeriodMs', spec.resyncPeriodMs, true);
  if (!(spec.resyncMaxKeys >= 0)) fail('resyncMaxKeys', spec.resyncMaxKeys); // Infinity: no limit
  rate('scrapeJitterMs', spec.scrapeJitterMs);
  if (spec.pauses !== null) {
    range('pauses.everyMs', spec.pauses.everyMs, true);
    range('pauses.durationMs', spec.pauses.durationMs, false);
  }
  const sibling = spec.siblingTraffic;
  if (sibling !== null) {
    rate('siblingTraffic.getsPerSecond', sibling.getsPerSecond);
    rate('siblingTraffic.writesPerSecond', sibling.writesPerSecond);
    share('siblingTraffic.getNotFoundShare', sibling.getNotFoundShare);
    share('siblingTraffic.writeConflictShare', sibling.writeConflictShare);
  }
}

/** When a controller resyncs: its scenario's resync, or the background's; null: never. */
export interface ResyncPlan {
  readonly periodMs: number;
  /** First resync, ms since process start. */
  readonly firstAtMs: number;
  readonly source: 'scenario' | 'background';
}

/**
 * The resync of `controller` in a run with `seed` and its resolved `background`: the scenario's when it sets
 * `events.resyncPeriodMs` (0: none), else one drawn from `background.resyncPeriodMs` (stream
 * `<name>/background/resync`: the period, then the first resync's phase within it).
 */
export function resyncPlan(controller: ControllerSpec, seed: number, background: BackgroundSpec): ResyncPlan | null {
  const { events } = controller;
  if (events.resyncPeriodMs !== undefined) {
    const periodMs = events.resyncPeriodMs;
    if (!(periodMs > 0)) return null;
    return { periodMs, firstAtMs: events.firstResyncAtMs ?? periodMs, source: 'scenario' };
  }
  const range = background.resyncPeriodMs;
  if (range === null || controller.keys > background.resyncMaxKeys) return null;
  const rng = new Random(seed, `${controller.name}/background/resync`);
  const periodMs = Math.round(rng.uniform(range[0], range[1]));
  return { periodMs, firstAtMs: Math.round(rng.uniform(0, periodMs)), source: 'background' };
}
