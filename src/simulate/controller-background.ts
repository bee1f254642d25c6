/**
 * The background of a simulated controller (`BackgroundSpec`), resolved for the hot path: per-sync
 * shares of 409 conflicts and optional 404 GETs, which keys poll with `RequeueAfter` and at what
 * interval, the resync plan; and `PauseState`, the process-wide pauses its controllers share.
 *
 * Contract: a key's background role (polling or not, its poll interval) is a seeded hash of the key,
 * fixed for the run and costing no per-key table; the same seed and spec give the same roles.
 */
import { type BackgroundSpec, type ControllerSpec, type ResyncPlan, resyncPlan } from './model.js';
import { Random } from './random.js';

/**
 * Whole-process pauses (`BackgroundSpec.pauses`): while `untilMs` (clock time) is ahead of the clock, workers
 * take no new keys and sync completions wait; `end()` lets the waiting completions finish, in the order they
 * were due, then wakes workers waiting on the real clock.
 */
export class PauseState {
  /** End of the current pause (clock ms); not paused when it is not ahead of the clock. */
  untilMs = Number.NEGATIVE_INFINITY;
  private deferred: (() => void)[] = [];
  private waiters: (() => void)[] = [];

  /** Runs `fn` when the current pause ends. */
  defer(fn: () => void): void {
    this.deferred.push(fn);
  }

  /** Resolves when the current pause ends. */
  wait(): Promise<void> {
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  end(): void {
    this.untilMs = Number.NEGATIVE_INFINITY;
    const deferred = this.deferred;
    const waiters = this.waiters;
    this.deferred = [];
    this.waiters = [];
    for (const fn of deferred) fn();
    for (const resolve of waiters) resolve();
  }
}

/** A 32-bit integer hash (lowbias32): a key's fixed, seeded background role without a per-key table. */
function mix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

const UINT32 = 4_294_967_296;

/**
 * Which of a controller's keys wait on something outside and are polled with `RequeueAfter`, and at what interval:
 * a seeded hash of the key (stream `<name>/background/polling` gives the salts), fixed per key and costing no table.
 * The simulated controller and its ground truth read the same roles.
 */
export class PollingRoles {
  private readonly threshold: number;
  private readonly salt: number;
  private readonly intervalSalt: number;
  private readonly intervalMinMs: number;
  private readonly intervalSpanMs: number;

  constructor(controller: Pick<ControllerSpec, 'name' | 'keys'>, seed: number, spec: BackgroundSpec) {
    const share = Math.min(spec.pollingKeyShare, spec.pollingMaxKeys / Math.max(1, controller.keys));
    this.threshold = share * UINT32;
    const salts = new Random(seed, `${controller.name}/background/polling`);
    this.salt = salts.nextUint32();
    this.intervalSalt = salts.nextUint32();
    this.intervalMinMs = spec.pollIntervalMs[0];
    this.intervalSpanMs = spec.pollIntervalMs[1] - spec.pollIntervalMs[0];
  }

  /** Whether any key can poll. */
  get any(): boolean {
    return this.threshold > 0;
  }

  /** Whether `key` is waiting on something external (polled with `RequeueAfter`). */
  isPolling(key: number): boolean {
    return this.threshold > 0 && mix32(key ^ this.salt) < this.threshold;
  }

  /** The fixed poll interval of `key`, whole ms. */
  intervalMs(key: number): number {
    return this.intervalMinMs + Math.round((this.intervalSpanMs * mix32(key ^ this.intervalSalt)) / UINT32);
  }

  /** How many of `keys` keys poll. */
  count(keys: number): number {
    if (this.threshold <= 0) return 0;
    let count = 0;
    for (let key = 0; key < keys; key++) if (this.isPolling(key)) count++;
    return count;
  }

  /** Polls a second that all the polling keys among `keys` make once each is polled. */
  pollsPerSecond(keys: number): number {
    if (this.threshold <= 0) return 0;
    let perSecond = 0;
    for (let key = 0; key < keys; key++) if (this.isPolling(key)) perSecond += 1000 / this.intervalMs(key);
    return perSecond;
  }
}

/** A controller's resolved controller-level background, precomputed for the hot path. */
export class ControllerBackground {
  readonly conflictShare: number;
  readonly optionalGetShare: number;
  /** The shares as thresholds on a uniform 32-bit draw (one `nextUint32` per decision). */
  readonly conflictThreshold: number;
  readonly optionalGetThreshold: number;
  readonly resync: ResyncPlan | null;
  /** Whether any per-sync component is on. */
  readonly perSync: boolean;
  readonly polling: PollingRoles;

  constructor(controller: ControllerSpec, seed: number, spec: BackgroundSpec) {
    this.conflictShare = spec.conflictShare;
    this.optionalGetShare = spec.optionalGetShare;
    this.conflictThreshold = spec.conflictShare * UINT32;
    this.optionalGetThreshold = spec.optionalGetShare * UINT32;
    this.resync = resyncPlan(controller, seed, spec);
    this.polling = new PollingRoles(controller, seed, spec);
    this.perSync = this.conflictShare > 0 || this.optionalGetShare > 0 || this.polling.any;
  }
}
