/**
 * Large amounts of work that drain on their own: the initial list of a controller that starts over a big
 * cluster, and batches that arrive periodically and are worked off before the next one (a sawtooth). The
 * depth is high for minutes, even most of the run, but it falls steadily: not a backlog (see the drain
 * bound in src/diagnosis/rules/backlog.ts).
 */
import { lognormal, meanMs } from '../distributions.js';
import type { DiagnosisId, Scenario, SyncModelFactory } from '../model.js';
import { SUCCESS } from '../model.js';
import {
  capacity,
  capacityTruth,
  changeLoad,
  firstKeys,
  LIST_STATUS_WRITE_SHARE,
  LONGEST_RULE_WINDOW_MS,
  leaseName,
  listDrainSeconds,
  listDrainTruth,
  MINUTE,
  relistedList,
  round,
  SECOND,
  type Sizes,
  sizes,
  steadySync,
  withSyncMs,
} from './common.js';
import { withSyncTail } from './slow-work.js';

// ---------------------------------------------------------------------------------------------
// initial-list

const INITIAL: Sizes = { workers: 2, keys: 100_000, rate: 1 };
const INITIAL_SYNC = lognormal(28, 0.4);
/**
 * Status writes per listed object from which a list's fall no longer tells it from a loop: converging in four
 * writes, each listed key is synced five times and the list falls at a fifth of the completions, as beside a loop
 * that holds the workers. Up to three it is a list converging on its status, and a loop is wrong.
 */
const LOOP_LIKE_LIST_WRITES = 4;

/**
 * `steadySync(INITIAL_SYNC, LIST_STATUS_WRITE_SHARE)`, and a listed object's first `listWrites` passes each write its
 * status (the echo of each write syncs it again), over `keys` objects.
 */
function listSync(keys: number, listWrites: number): SyncModelFactory {
  const steady = steadySync(INITIAL_SYNC, LIST_STATUS_WRITE_SHARE);
  if (listWrites === 0) return steady;
  return (env) => {
    const sync = steady(env);
    const passes = new Uint8Array(keys);
    return (ctx) => {
      const plan = sync(ctx);
      if (ctx.changed || passes[ctx.key]! >= listWrites) return plan;
      passes[ctx.key]! += 1;
      return { durationMs: plan.durationMs, result: SUCCESS, write: 'PATCH' };
    };
  };
}

export const initialList: Scenario = {
  name: 'initial-list',
  summary: 'a controller starting over 100,000 objects works off its initial list for about 25 minutes',
  description:
    'A namespace-policy controller starts in a cluster with 100,000 namespaces and 2 workers (syncs of ~30 ms: ' +
    '~67 per second). The informer lists every object at start; the depth begins at 100,000 and falls at ~66 per ' +
    'second while a trickle of new events (1 per second) arrives. Queue latency is tens of minutes while it drains: ' +
    'expected at startup, and over on its own. A relist (`relistAtSeconds`: the watch expired, as across a ' +
    'control-plane upgrade) queues every object worked off so far again: the depth jumps back and drains on.',
  defaults: INITIAL,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, INITIAL);
    const listWrites = params.listWrites ?? 0;
    const cap = capacity(workers, INITIAL_SYNC);
    const load = changeLoad(rate, LIST_STATUS_WRITE_SHARE);
    // Each listed key is synced once more for every status write it takes.
    const listSeconds = (1 + listWrites) * listDrainSeconds(keys, load, cap);
    const relist = relistedList(listSeconds, params);
    const drainSeconds = relist.drainSeconds;
    const truth = listDrainTruth(
      load / cap,
      drainSeconds,
      params,
      `the initial list of ${keys} objects drains in about ${Math.round(listSeconds / 60)} minutes${listWrites > 0 ? `, each converging in ${listWrites} status writes` : ''}${relist.note}`,
    );
    const loopLike: DiagnosisId[] = listWrites >= LOOP_LIKE_LIST_WRITES ? ['WorkqueueHotLoop'] : [];
    // The classic queue puts each echo at the back, behind the whole list: the depth stands where it began for a
    // pass, every worker busy and keys waiting the pass out, until the last pass: saturated and late alike, and
    // neither owed (it is over on its own). The priority queue syncs echoes first, and the list falls.
    const standing: DiagnosisId[] =
      listWrites > 0 && params.queue !== 'priority' ? ['WorkqueueBacklog', 'WorkqueueSaturated'] : [];
    const allowed = [...new Set([...truth.allowed, ...loopLike, ...standing])];
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'policy-operator'),
      controllers: [
        {
          name: 'namespacepolicy',
          workers,
          keys,
          events: {
            rate,
            keys: { kind: 'uniform' },
            initialKeys: firstKeys(keys),
            resyncPeriodMs: 10 * 60 * MINUTE,
            ...relist.events,
          },
          sync: listSync(keys, listWrites),
          truth:
            standing.length > 0
              ? {
                  ...truth,
                  allowed,
                  allowedUntilMs: Math.max(truth.allowedUntilMs ?? 0, drainSeconds * SECOND + LONGEST_RULE_WINDOW_MS),
                }
              : { ...truth, allowed },
          facts: {
            capacityPerSecond: round(cap, 2),
            drainSeconds: round(drainSeconds, 0),
            meanSyncSeconds: round(meanMs(INITIAL_SYNC) / 1000, 4),
          },
        },
      ],
    };
  },
};

// ---------------------------------------------------------------------------------------------
// sawtooth-batches

const SAWTOOTH: Sizes = { workers: 4, keys: 200_000, rate: 2 };
const SAWTOOTH_SYNC = lognormal(18, 0.5);
const BATCH_EVERY_MS = 8 * MINUTE;
const FIRST_BATCH_AT_MS = MINUTE;
const BATCH_SIZE = 30_000;
const BATCH_SPREAD_MS = 2 * SECOND;

export const sawtoothBatches: Scenario = {
  name: 'sawtooth-batches',
  summary: 'a batch of 30,000 objects changes every 8 minutes and drains in about 2.5 minutes',
  description:
    'A report controller over 200,000 objects, 4 workers (syncs of ~20 ms: ~200 per second), 2 steady events per ' +
    'second. Every 8 minutes (first at 1m) an upstream job touches 30,000 distinct objects within 2 seconds: the ' +
    'depth jumps to 30,000 and falls to zero in about 2.5 minutes, a sawtooth. Bounded and periodic: not a backlog. ' +
    '--batch-size sets how many objects a batch touches (at most --keys), --sync-ms the median sync: a batch that ' +
    'takes longer than 8 minutes to work off lands on what is left of the last one, a backlog.',
  defaults: SAWTOOTH,
  build: (params) => {
    const { workers, keys, rate } = sizes(params, SAWTOOTH);
    const sync = withSyncMs(SAWTOOTH_SYNC, params);
    const cap = capacity(workers, sync);
    const batch = Math.min(params.batchSize ?? BATCH_SIZE, keys);
    // The batch's changes and the steady ones each write status now and then: the echoes are syncs too.
    const steady = changeLoad(rate, LIST_STATUS_WRITE_SHARE);
    const batchWork = changeLoad(batch, LIST_STATUS_WRITE_SHARE);
    const drainSeconds = steady >= cap ? Number.POSITIVE_INFINITY : batchWork / (cap - steady);
    const load = (steady + batchWork / (BATCH_EVERY_MS / SECOND)) / cap;
    let truth = capacityTruth(load, params);
    if (drainSeconds * SECOND > BATCH_EVERY_MS) {
      // The first batch lands on an empty queue and drains like any burst; the backlog begins when the second
      // lands on what is left of it. The load that causes it is there from the first. As for any load, one within a
      // tenth of the capacity is too close to call.
      truth = {
        ...truth,
        onsetMs: FIRST_BATCH_AT_MS + BATCH_EVERY_MS,
        causeMs: FIRST_BATCH_AT_MS,
        note: `a batch does not drain before the next one arrives (${truth.note})`,
      };
    } else {
      truth = { ...truth, note: `each batch drains in about ${Math.round(drainSeconds)} s` };
    }
    // Slow syncs (--sync-ms) block as a blocking call's do, whatever the queue does.
    truth = withSyncTail(truth, sync, cap, { from: load, to: load });
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'report-operator'),
      controllers: [
        {
          name: 'report',
          workers,
          keys,
          events: {
            rate,
            keys: { kind: 'uniform' },
            bursts: [
              {
                firstAtMs: FIRST_BATCH_AT_MS,
                everyMs: BATCH_EVERY_MS,
                durationMs: BATCH_SPREAD_MS,
                rate: batch / (BATCH_SPREAD_MS / SECOND),
                keys: { kind: 'distinct' },
              },
            ],
          },
          sync: steadySync(sync, LIST_STATUS_WRITE_SHARE),
          truth,
          facts: {
            capacityPerSecond: round(cap, 2),
            batch,
            drainSeconds: round(drainSeconds, 1),
            load: round(load, 3),
          },
        },
      ],
    };
  },
};
