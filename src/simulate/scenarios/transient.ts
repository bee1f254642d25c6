/**
 * Errors a work queue exists for: transient failures that succeed on the retry, and a dependency that
 * fails for a few minutes and recovers. None of them is a persistent failure; a careful SRE would not be
 * paged for any of them.
 */
import { lognormal, sampler } from '../distributions.js';
import { type ApiRequest, type ControllerSpec, ERROR, type Scenario, type SimulationParams } from '../model.js';
import {
  capacity,
  capacityTruth,
  combineTruth,
  FAILURES_STOPPED_GRACE_MS,
  leaseName,
  MINUTE,
  round,
  type Sizes,
  sizes,
  steadySync,
} from './common.js';

// ---------------------------------------------------------------------------------------------
// transient-errors

const TRANSIENT: Sizes = { workers: 4, keys: 3_000, rate: 12 };
const TRANSIENT_SYNC = lognormal(15, 0.5);
/** Writes answered 409 on a stale resourceVersion: the retry reads the new version and succeeds. */
const CONFLICT_SHARE = 0.025;
/**
 * A cloud API throttling the call (not a Kubernetes request, so no REST client trace): the retry succeeds. The
 * default share of first attempts; `--transient-share` sets another.
 */
const THROTTLED_SHARE = 0.01;
/**
 * Errors that succeed on their first retry, up to this share of first attempts, are the everyday noise of a busy
 * controller (a throttled API, a dependency created a moment later): a few percent, nothing to warn about. Past it,
 * a share of syncs that fail before they succeed is worth a look (it is how "not ready yet" returned as an error
 * reads), so a persistent-failure finding is allowed, not owed.
 */
const TRANSIENT_NOISE_SHARE = 0.035;
const CONFLICT: readonly ApiRequest[] = [{ method: 'PUT', code: '409' }];

export const transientErrors: Scenario = {
  name: 'transient-errors',
  summary: 'conflicts and throttled calls that succeed on the retry: the everyday noise of a busy controller',
  description:
    'A load-balancer controller over 3,000 objects, 12 events per second, 4 workers, syncs of ~17 ms. On top of the ' +
    'background noise (1.5% of syncs in conflict), 2.5% of first attempts write on a stale resourceVersion (PUT ' +
    'answered 409 Conflict) and 1% hit a throttled cloud API; each returns an error, is retried with backoff 5 ms ' +
    'later and succeeds. About 5% of syncs fail, every one of them once: expected noise, not a persistent failure.',
  defaults: TRANSIENT,
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'lb-operator'),
    controllers: [transientErrorsController(params)],
  }),
};

function transientErrorsController(params: SimulationParams): ControllerSpec {
  const { workers, keys, rate } = sizes(params, TRANSIENT);
  const throttled = params.transientShare ?? THROTTLED_SHARE;
  const utilization = (rate * 1.2) / capacity(workers, TRANSIENT_SYNC);
  return {
    name: 'loadbalancer',
    workers,
    keys,
    events: { rate, keys: { kind: 'zipf', s: 0.6 } },
    sync: (env) => {
      const ok = steadySync(TRANSIENT_SYNC, 0.2, 'PUT')(env);
      const draw = sampler(TRANSIENT_SYNC, env.rng);
      return (ctx) => {
        // A retry finds the conflict resolved and the API no longer throttled.
        if (ctx.failures > 0) return ok(ctx);
        const roll = env.rng.next();
        if (roll < CONFLICT_SHARE) return { durationMs: draw(), result: ERROR, requests: CONFLICT };
        if (roll < CONFLICT_SHARE + throttled) return { durationMs: draw(), result: ERROR };
        return ok(ctx);
      };
    },
    truth: combineTruth(
      capacityTruth(utilization, params),
      throttled <= TRANSIENT_NOISE_SHARE
        ? { expected: [], allowed: [], note: 'every error succeeds on its first retry: transient noise' }
        : {
            expected: [],
            allowed: ['WorkqueuePersistentFailures'],
            note: `${round(throttled * 100, 2)}% of first attempts fail before they succeed: more than the everyday ${TRANSIENT_NOISE_SHARE * 100}%, worth a look`,
          },
    ),
    facts: { conflictShare: CONFLICT_SHARE, throttledShare: throttled, utilization: round(utilization, 3) },
  };
}

// ---------------------------------------------------------------------------------------------
// dependency-outage

const OUTAGE: Sizes = { workers: 2, keys: 1_000, rate: 4 };
const OUTAGE_SYNC = lognormal(20, 0.5);
const OUTAGE_FAIL_SYNC = lognormal(60, 0.3);
const OUTAGE_START_MS = 5 * MINUTE;
/** How long the provider is down unless `--outage-seconds` says. */
const OUTAGE_MS = 6 * MINUTE;

export const dependencyOutage: Scenario = {
  name: 'dependency-outage',
  summary: 'a dependency fails for 6 minutes and recovers: errors stop, backoff retries succeed',
  description:
    'A DNS-record controller over 1,000 objects, 4 events per second, 2 workers. From 5m to 11m (`--outage-seconds` ' +
    'sets another length) its DNS provider is down: every sync fails (~60 ms timeout) and backs off exponentially. ' +
    'Then it recovers: new syncs succeed and the keys still in backoff succeed on their next retry. The outage is ' +
    'over; nothing persists but, with `--transient-share`, the everyday transient errors around it.',
  defaults: OUTAGE,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, OUTAGE);
    const utilization = (rate * 1.2) / capacity(workers, OUTAGE_SYNC);
    const outageMs = params.outageSeconds === undefined ? OUTAGE_MS : params.outageSeconds * 1000;
    const recoveredAtMs = OUTAGE_START_MS + outageMs;
    const transient = params.transientShare ?? 0;
    const noisy = transient > TRANSIENT_NOISE_SHARE;
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'dns-operator'),
      controllers: [
        {
          name: 'dnsrecord',
          workers,
          keys,
          events: { rate, keys: { kind: 'uniform' } },
          sync: (env) => {
            const ok = steadySync(OUTAGE_SYNC, 0.2)(env);
            const draw = sampler(OUTAGE_FAIL_SYNC, env.rng);
            const drawOk = sampler(OUTAGE_SYNC, env.rng);
            return (ctx) => {
              if (ctx.nowMs >= OUTAGE_START_MS && ctx.nowMs < recoveredAtMs)
                return { durationMs: draw(), result: ERROR, requests: undefined };
              // Outside the outage: the everyday transient errors, each succeeding on its retry.
              if (transient > 0 && ctx.failures === 0 && env.rng.next() < transient)
                return { durationMs: drawOk(), result: ERROR };
              return ok(ctx);
            };
          },
          truth: combineTruth(capacityTruth(utilization, params), {
            expected: [],
            allowed: ['WorkqueuePersistentFailures'],
            // A warning while the provider is down is fair; once it has been back for a grace period, none, unless
            // the errors around the outage are more than everyday noise.
            ...(noisy ? {} : { allowedUntilMs: recoveredAtMs + FAILURES_STOPPED_GRACE_MS }),
            note: `the provider is down from ${OUTAGE_START_MS / MINUTE}m to ${round(recoveredAtMs / MINUTE, 2)}m, then recovers${
              transient === 0
                ? ''
                : noisy
                  ? `; around it ${round(transient * 100, 2)}% of first attempts fail before they succeed, more than the everyday ${TRANSIENT_NOISE_SHARE * 100}%`
                  : `; ${round(transient * 100, 2)}% of first attempts fail once around it (everyday noise)`
            }`,
          }),
          facts: {
            outageStartSeconds: OUTAGE_START_MS / 1000,
            outageSeconds: outageMs / 1000,
            transientShare: transient,
          },
        },
      ],
    };
  },
};
