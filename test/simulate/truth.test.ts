/**
 * Ground truths: what each scenario must and may be diagnosed with at default parameters, and how
 * computed truths follow overridden parameters.
 */
import { describe, expect, it } from 'vitest';
import {
  type DiagnosisId,
  getScenario,
  groundTruth,
  resolveParams,
  SCENARIO_NAMES,
  type SimulationParams,
} from '../../src/simulate/index.js';

function truthOf(name: string, params: Partial<SimulationParams> = {}) {
  return groundTruth(getScenario(name), resolveParams(params));
}

const TABLE: Record<string, { expected: DiagnosisId[]; allowed: DiagnosisId[] }> = {
  healthy: { expected: [], allowed: [] },
  'resync-burst': { expected: [], allowed: [] },
  'rollout-burst': { expected: [], allowed: [] },
  'short-spike': { expected: [], allowed: [] },
  'bulk-change': { expected: [], allowed: [] },
  'busy-but-fine': { expected: [], allowed: [] },
  'slow-but-steady': { expected: [], allowed: [] },
  'event-per-sync': { expected: [], allowed: [] },
  'rejected-writes': { expected: [], allowed: [] },
  'requeue-after': { expected: [], allowed: [] },
  'transient-errors': { expected: [], allowed: [] },
  'dependency-outage': { expected: [], allowed: ['WorkqueuePersistentFailures'] },
  'initial-list': { expected: [], allowed: [] },
  'sawtooth-batches': { expected: [], allowed: [] },
  'startup-list': { expected: [], allowed: [] },
  'starved-backlog': { expected: ['WorkqueueBacklog'], allowed: ['WorkqueueSaturated'] },
  'caches-never-sync': { expected: ['WorkqueueBacklog'], allowed: [] },
  'gradual-backlog': { expected: ['WorkqueueBacklog'], allowed: ['WorkqueueSaturated'] },
  standby: { expected: [], allowed: [] },
  backlog: { expected: ['WorkqueueBacklog'], allowed: ['WorkqueueSaturated'] },
  saturation: { expected: ['WorkqueueSaturated'], allowed: ['WorkqueueBacklog'] },
  'hot-loop-status-write': { expected: ['WorkqueueHotLoop'], allowed: [] },
  'hot-loop-no-backoff': { expected: ['WorkqueueHotLoop'], allowed: ['WorkqueuePersistentFailures'] },
  'loop-beside-list': { expected: ['WorkqueueHotLoop'], allowed: ['WorkqueueBacklog', 'WorkqueueSaturated'] },
  'self-requeue-loop': {
    expected: [],
    allowed: ['WorkqueueHotLoop', 'WorkqueueBacklog', 'WorkqueueSaturated'],
  },
  'blocking-call': { expected: ['WorkqueueSlowWork'], allowed: [] },
  'slow-poll': { expected: ['WorkqueueSlowWork'], allowed: [] },
  'stuck-worker': { expected: ['WorkqueueStuckWorker'], allowed: ['WorkqueueSlowWork'] },
  'persistent-failure': { expected: ['WorkqueuePersistentFailures'], allowed: [] },
  'requeue-as-error': { expected: ['WorkqueuePersistentFailures'], allowed: [] },
  'not-observable': { expected: ['WorkqueueNotObservable'], allowed: [] },
};

describe('ground truth at default parameters', () => {
  it('covers every scenario', () => {
    const processes = ['mixed', 'loop-beside-writers'];
    expect(Object.keys(TABLE).sort()).toEqual(SCENARIO_NAMES.filter((name) => !processes.includes(name)).sort());
  });

  it('loop-beside-list: the loop is owed while the list falls at 0.15 of the completions or less', () => {
    const queue = (params: Partial<SimulationParams>) => truthOf('loop-beside-list', params).queues[0]!;
    // Default: 300 ms provider syncs on the two free workers, the list at about 0.13 of the completions.
    expect(queue({}).facts?.listShareOfCompletions).toBeLessThan(0.15);
    // Faster syncs of the list (100 ms): it falls at about a third, as a list converging in two writes would.
    const fast = queue({ syncMs: 100 });
    expect(fast.facts?.listShareOfCompletions).toBeGreaterThan(0.15);
    expect(fast.expected).toEqual([]);
    expect(fast.allowed).toContain('WorkqueueHotLoop');
    // The classic queue serves in order: the loop waits behind the list.
    expect(queue({ queue: 'classic' }).expected).toEqual([]);
  });

  it('loop-beside-writers: the loop is owed while the other queue adds under half of what it adds', () => {
    const queues = (rate?: number) => truthOf('loop-beside-writers', rate === undefined ? {} : { rate }).queues;
    expect(queues().map((q) => [q.name, q.expected])).toEqual([
      ['secret-mirror', ['WorkqueueHotLoop']],
      ['usage-report', []],
    ]);
    expect(queues()[1]?.allowed).toEqual([]);
    const shared = queues(32);
    expect(shared[0]?.expected).toEqual([]);
    expect(shared[0]?.allowed).toContain('WorkqueueHotLoop');
    expect(shared[1]?.allowed).toEqual([]);
  });

  it.each(Object.entries(TABLE))('%s', (name, want) => {
    const truth = truthOf(name);
    expect(truth.queues).toHaveLength(1);
    expect(truth.queues[0]).toMatchObject(want);
    expect(truth).toMatchObject({ scenario: name, job: 'workqueue-doctor-sim', instance: `${name}:8080` });
  });

  it('starved-backlog expects a backlog only where the priority queue shows it', () => {
    expect(truthOf('starved-backlog', { queue: 'classic' }).queues[0]).toMatchObject({
      expected: [],
      allowed: ['WorkqueueBacklog', 'WorkqueueSaturated'],
    });
    expect(truthOf('starved-backlog').queue).toBe('priority');
    expect(truthOf('starved-backlog', { queue: 'classic' }).queue).toBe('classic');
  });

  it('standby is one target-level entry with status standby', () => {
    const truth = truthOf('standby');
    expect(truth.standby).toBe(true);
    expect(truth.queues).toEqual([expect.objectContaining({ name: null, controller: null, status: 'standby' })]);
  });

  it('not-observable names no queue, only the controller known from controller_runtime_*', () => {
    expect(truthOf('not-observable').queues[0]).toMatchObject({ name: null, controller: 'certificate' });
    expect(truthOf('not-observable', { flavor: 'component-base' }).queues[0]).toMatchObject({
      name: null,
      controller: null,
    });
  });

  it('mixed: five distinct queues, each with its own truth', () => {
    const truth = truthOf('mixed');
    const byName = Object.fromEntries(truth.queues.map((queue) => [queue.name, queue.expected]));
    expect(byName).toEqual({
      deployment: [],
      'ingress-status': ['WorkqueueHotLoop'],
      pod: ['WorkqueueBacklog'],
      dbuser: ['WorkqueuePersistentFailures'],
      volumesnapshot: ['WorkqueueSlowWork'],
    });
    for (const queue of truth.queues) expect(queue.controller).toBe(queue.name);
  });

  it('queue names are lowercase kind or kebab names', () => {
    for (const name of SCENARIO_NAMES) {
      for (const queue of truthOf(name).queues) {
        if (queue.name !== null) expect(queue.name).toMatch(/^[a-z][a-z0-9-]*$/);
      }
    }
  });
});

describe('computed truth follows the parameters', () => {
  it('backlog keeps its arrivals at 1.2x capacity whatever the workers', () => {
    for (const workers of [1, 4, 16]) {
      const queue = truthOf('backlog', { workers }).queues[0]!;
      expect(queue.facts?.load).toBe(1.2);
      expect(queue.expected).toEqual(['WorkqueueBacklog']);
    }
  });

  it('backlog with an explicit rate below capacity is no backlog', () => {
    const queue = truthOf('backlog', { rate: 20 }).queues[0]!;
    expect(queue.expected).toEqual([]);
  });

  it('busy-but-fine pushed to 95% is saturated', () => {
    const capacity = Number(truthOf('busy-but-fine').queues[0]!.facts?.capacityPerSecond);
    expect(truthOf('busy-but-fine', { rate: 0.95 * capacity }).queues[0]!.expected).toEqual(['WorkqueueSaturated']);
  });

  it('stuck-worker with few workers allows backlog and saturation', () => {
    expect(truthOf('stuck-worker', { workers: 2 }).queues[0]!.allowed).toEqual([
      'WorkqueueSlowWork',
      'WorkqueueBacklog',
      'WorkqueueSaturated',
    ]);
    expect(truthOf('stuck-worker', { durationMs: 10 * 60_000 }).queues[0]!.facts?.stuckAtSeconds).toBe(120);
  });

  it('blocking-call with one worker allows saturation and backlog', () => {
    expect(truthOf('blocking-call', { workers: 1 }).queues[0]!.allowed).toEqual([
      'WorkqueueSaturated',
      'WorkqueueBacklog',
    ]);
  });

  it('requeue-after without controller-runtime error metrics expects and allows nothing: retries prove nothing', () => {
    expect(truthOf('requeue-after', { flavor: 'component-base' }).queues[0]).toMatchObject({
      expected: [],
      allowed: [],
    });
  });

  it('failures without reconcile error metrics are stated as not diagnosable, not rewritten as allowed', () => {
    for (const name of ['persistent-failure', 'requeue-as-error']) {
      const queue = truthOf(name, { flavor: 'component-base' }).queues[0]!;
      expect(queue).toMatchObject({ expected: [], allowed: [] });
      expect(queue.note).toMatch(/not diagnosable here/);
    }
  });

  it('saturation without a max-workers metric is allowed, never required: told only from a depth that never drains', () => {
    const queue = truthOf('saturation', { flavor: 'component-base', workers: 1 }).queues[0]!;
    expect(queue).toMatchObject({ expected: [], allowed: ['WorkqueueBacklog', 'WorkqueueSaturated'] });
    expect(queue.note).toMatch(/without a max-workers metric saturation is told only from a depth that never drains/);
  });

  it('problems that begin mid-run carry their onset; a recovered outage its end of tolerance', () => {
    expect(truthOf('stuck-worker').queues[0]!.onsetMs).toBe(10 * 60_000);
    expect(truthOf('gradual-backlog').queues[0]!.onsetMs).toBeGreaterThan(15 * 60_000);
    expect(truthOf('dependency-outage').queues[0]!.allowedUntilMs).toBe((11 + 10) * 60_000);
  });

  it('a loop of as many keys as workers or more holds every worker: saturation and a backlog are allowed beside it', () => {
    expect(truthOf('hot-loop-status-write', { workers: 4, loopKeys: 3 }).queues[0]!.allowed).toEqual([]);
    const three = truthOf('hot-loop-status-write', { workers: 1 }).queues[0]!;
    expect(three.expected).toEqual(['WorkqueueHotLoop']);
    expect([...three.allowed].sort()).toEqual(['WorkqueueBacklog', 'WorkqueueSaturated']);
    // On the classic queue a loop whose keys wait a few syncs of milliseconds holds nothing back: no backlog.
    expect(truthOf('hot-loop-status-write', { workers: 2, loopKeys: 18, queue: 'classic' }).queues[0]!.allowed).toEqual(
      ['WorkqueueSaturated'],
    );
    expect(truthOf('hot-loop-no-backoff', { workers: 4, loopKeys: 30 }).queues[0]!.expected).toEqual([
      'WorkqueueHotLoop',
    ]);
  });

  it('a status-write loop is owed while its keys wait under ten syncs each, allowed where they pile up', () => {
    // 21 keys on 2 workers: 19 waiting, 9.5 per worker; 22 keys: 10 per worker, as keys behind a standing backlog.
    expect(truthOf('hot-loop-status-write', { workers: 2, loopKeys: 21 }).queues[0]!.expected).toEqual([
      'WorkqueueHotLoop',
    ]);
    const piled = truthOf('hot-loop-status-write', { workers: 2, loopKeys: 22 }).queues[0]!;
    expect(piled.expected).toEqual([]);
    expect(piled.allowed).toContain('WorkqueueHotLoop');
  });

  it('a status-write loop is owed where it makes nearly all the adds, allowed beside as many real changes', () => {
    // One object through a 0.7 s sync: 1.4 adds a second, beside 0.1 real changes (owed) or 1 (allowed).
    const slow = { loopKeys: 1, syncMs: 700, background: 'off' } as const;
    expect(truthOf('hot-loop-status-write', { ...slow, rate: 0.1 }).queues[0]!.expected).toEqual(['WorkqueueHotLoop']);
    const diluted = truthOf('hot-loop-status-write', { ...slow, rate: 1 }).queues[0]!;
    expect(diluted.expected).toEqual([]);
    expect(diluted.allowed).toEqual(['WorkqueueHotLoop']);
  });
});

describe('computed truth at the edges', () => {
  it('a backlog over few keys that levels off is a backlog while its keys wait long', () => {
    // 1.2× capacity (42 syncs/s): deduplication holds the depth near a sixth of the keys. 5,000 keys: 833 standing,
    // 20 s each; levelled off within the run, still late.
    const late = truthOf('backlog', { keys: 5_000 }).queues[0]!;
    expect(late.expected).toEqual(['WorkqueueBacklog']);
    expect(late.allowed).toEqual(['WorkqueueSaturated']);
  });

  it('an overload over so few keys that each waits under a second is saturation, never a backlog', () => {
    // 200 keys: 33 standing, under a second each, and about 1.3 s three spreads above that level: never late.
    const short = truthOf('backlog', { keys: 200 }).queues[0]!;
    expect(short.expected).toEqual(['WorkqueueSaturated']);
    expect(short.allowed).toEqual([]);
    const blind = truthOf('backlog', { keys: 200, flavor: 'component-base' }).queues[0]!;
    expect(blind.expected).toEqual([]);
    expect(blind.allowed).not.toContain('WorkqueueBacklog');
  });

  it('a standing overload whose excursions could make keys late allows a backlog; one clear of the line forbids it', () => {
    // 1.5x the capacity of 4 workers of 96 ms syncs (41.8 a second). 441 keys: 147 standing, 3.5 s each, and
    // 198 keys (4.7 s) three spreads (17 keys each) above: never late. 600 keys: 200 standing, 4.8 s, 6 s above.
    const sizes = (keys: number) => ({ keys, rate: 63, background: 'off' as const });
    const clear = truthOf('backlog', sizes(441)).queues[0]!;
    expect(clear.expected).toEqual(['WorkqueueSaturated']);
    expect(clear.allowed).toEqual([]);
    const close = truthOf('backlog', sizes(600)).queues[0]!;
    expect(close.expected).toEqual(['WorkqueueSaturated']);
    expect(close.allowed).toEqual(['WorkqueueBacklog']);
  });

  it('an overload whose depth is still rising at the end is a backlog, whatever its population', () => {
    // 200,000 keys: the depth needs hours to level off.
    expect(truthOf('backlog', {}).queues[0]!.expected).toEqual(['WorkqueueBacklog']);
  });

  it("the background's polled objects are load: slow syncs on few workers rise to saturation over the run", () => {
    // 2,000 objects, 1.2 events a second and their status echoes on 4 workers of 2 s syncs: 80% busy from the
    // events; 20 polled objects every 30 to 60 s, most reached within the run, add most of a worker.
    const polled = truthOf('slow-but-steady', { workers: 4 }).queues[0]!;
    expect(Number(polled.facts?.utilization)).toBeLessThan(0.85);
    expect(Number(polled.facts?.finalUtilization)).toBeGreaterThan(0.9);
    expect(polled.expected).toEqual([]);
    expect(polled.allowed).toContain('WorkqueueSaturated');
    const quiet = truthOf('slow-but-steady', { workers: 4, background: 'off' }).queues[0]!;
    expect(quiet.facts?.finalUtilization).toBe(quiet.facts?.utilization);
    expect(quiet.allowed).toEqual([]);
  });

  it('an overloaded startup list on the classic queue allows a backlog; the priority queue shows it', () => {
    // 63 changes a second on one worker (about 26 syncs a second).
    expect(truthOf('startup-list', { workers: 1, queue: 'classic' }).queues[0]!.expected).toEqual([]);
    expect(truthOf('startup-list', { workers: 1, queue: 'classic' }).queues[0]!.allowed).toContain('WorkqueueBacklog');
    expect(truthOf('startup-list', { workers: 1, queue: 'priority' }).queues[0]!.expected).toEqual([
      'WorkqueueBacklog',
    ]);
  });

  it('a startup list of slow syncs at half of capacity drains: no backlog, and its syncs block', () => {
    // One worker of 60 s syncs at the median (log-normal, sigma 0.4: 65 s on average) completes 0.0154 a second; 0.007
    // changes a second, each and a tenth more for its status echo, are half of it. Every sync passes 10 s: 0.92 a
    // minute while the list keeps the worker busy, 0.46 once the changes alone do, rarer than one in two minutes.
    const slow = truthOf('startup-list', { workers: 1, syncMs: 60_000, keys: 100, rate: 0.007, queue: 'priority' })
      .queues[0]!;
    expect(slow.expected).toEqual([]);
    expect(slow.allowed).toEqual(['WorkqueueSlowWork']);
    expect(Number(slow.facts?.meanSyncSeconds)).toBeCloseTo(65, 0);
    // The default syncs (38 ms) never block.
    expect(truthOf('startup-list').queues[0]!.allowed).not.toContain('WorkqueueSlowWork');
  });

  it('an Event per sync overloaded over few objects stands deduplicated: saturated, not a backlog', () => {
    // 70 changes a second over 200 objects on one worker (about 58 syncs a second): 34 waiting, under a second each,
    // and under two seconds three spreads above that level: never late.
    const queue = truthOf('event-per-sync', { workers: 1, keys: 200, rate: 70 }).queues[0]!;
    expect(queue.expected).toEqual(['WorkqueueSaturated']);
    expect(queue.allowed).toEqual([]);
  });

  it('objects failing forever are owed where events bring their errors often, allowed in a quiet controller', () => {
    expect(truthOf('persistent-failure').queues[0]!.expected).toEqual(['WorkqueuePersistentFailures']);
    // 2 of 20 objects at one event per 100 s: an error from events every 1,000 s, the rest in waves at the cap.
    const quiet = truthOf('persistent-failure', { keys: 20, failingKeys: 2, rate: 0.01 }).queues[0]!;
    expect(quiet.expected).toEqual([]);
    expect(quiet.allowed).toEqual(['WorkqueuePersistentFailures']);
  });

  it("objects failing forever are owed where their errors stand clear of the syncs the background's polls add", () => {
    // A tenth of 1,000 objects at 0.5 events a second: an error every 20 s, about 5% of the syncs beside the polls.
    const quiet = truthOf('persistent-failure', { rate: 0.5 }).queues[0]!;
    expect(quiet.expected).toEqual([]);
    expect(quiet.allowed).toEqual(['WorkqueuePersistentFailures']);
    // Without the background, the same errors are a tenth of the syncs.
    const alone = truthOf('persistent-failure', { rate: 0.5, background: 'off' }).queues[0]!;
    expect(alone.expected).toEqual(['WorkqueuePersistentFailures']);
  });

  it('objects rejected with a terminal error alone owe and allow nothing', () => {
    const queue = truthOf('persistent-failure', { failingKeys: 0, invalidKeys: 100 }).queues[0]!;
    expect(queue.expected).toEqual([]);
    expect(queue.allowed).toEqual([]);
    expect(queue.facts?.invalidKeys).toBe(100);
  });

  it('failing keys requeued at once: a loop where the queue counts no retry, failures retried where it counts them', () => {
    const atOnce = { failingKeys: 2, workers: 4, backoffBaseMs: 0 };
    const priority = truthOf('persistent-failure', { ...atOnce, queue: 'priority' }).queues[0]!;
    expect(priority.expected).toEqual(['WorkqueueHotLoop']);
    // Nothing backs off: the persistent-failure finding (failures retried with backoff) would be wrong.
    expect(priority.allowed).toEqual([]);
    const classic = truthOf('persistent-failure', { ...atOnce, queue: 'classic' }).queues[0]!;
    expect(classic.expected).toEqual(['WorkqueuePersistentFailures']);
    expect(classic.allowed).toEqual(['WorkqueueHotLoop']);
    const hidden = truthOf('persistent-failure', { ...atOnce, flavor: 'component-base', queue: 'classic' }).queues[0]!;
    expect(hidden.expected).toEqual([]);
    // Loopers beyond the workers hold every worker and stand waiting.
    const crowded = truthOf('persistent-failure', { ...atOnce, failingKeys: 6, queue: 'priority' }).queues[0]!;
    expect(crowded.allowed).toEqual(['WorkqueueSaturated', 'WorkqueueBacklog']);
    // A slow loop: owed where its errors come at two a second or more, far above the polls' retries beside them;
    // slower, allowed; as slow as the polls, the counts cannot tell it from a backoff.
    const slow = (syncMs: number) => truthOf('persistent-failure', { ...atOnce, syncMs, queue: 'priority' }).queues[0]!;
    expect(slow(800).expected).toEqual(['WorkqueueHotLoop']);
    expect(slow(1400).expected).toEqual([]);
    expect(slow(1400).allowed).toEqual(['WorkqueueHotLoop']);
    expect(slow(5000).allowed).toEqual(['WorkqueueHotLoop', 'WorkqueuePersistentFailures']);
    // Beside a fixed set of pollers, counted exactly (no background): owed while their retries stay at most four in
    // ten of the errors (3.2 a second at 0.6 s syncs; 34 pollers every 30 s retry 1.1 a second, 40 retry 1.35).
    const polled = (pollingKeys: number) =>
      truthOf('persistent-failure', {
        ...atOnce,
        syncMs: 600,
        rate: 0.5,
        pollingKeys,
        background: 'off',
        queue: 'priority',
      }).queues[0]!;
    expect(polled(34).expected).toEqual(['WorkqueueHotLoop']);
    expect(polled(34).facts?.pollingKeys).toBe(34);
    expect(polled(40).expected).toEqual([]);
    expect(polled(40).allowed).toEqual(['WorkqueueHotLoop']);
    expect(polled(60).allowed).toEqual(['WorkqueueHotLoop', 'WorkqueuePersistentFailures']);
    // A first delay above zero is backoff: the ordinary truth.
    expect(truthOf('persistent-failure', { backoffBaseMs: 50 }).queues[0]!.expected).toEqual([
      'WorkqueuePersistentFailures',
    ]);
  });

  it('batches that take longer than their period to work off are a backlog from the second, past a tenth of capacity', () => {
    // 128 workers of 40 s syncs at the median (log-normal, sigma 0.5: 45.3 s on average) complete 2.82 a second. A
    // batch of 1,472 objects every 8 minutes, each change and a tenth more for its status echo, is 3.4 a second with
    // the steady 0.022: 1.2 times capacity. The first batch lands on an empty queue; the second on what is left.
    const outpaced = truthOf('sawtooth-batches', { workers: 128, syncMs: 40_000, rate: 0.02, batchSize: 1_472 });
    const q = outpaced.queues[0]!;
    expect(q.expected).toEqual(['WorkqueueBacklog', 'WorkqueueSlowWork']);
    expect(q.onsetMs).toBe(9 * 60_000);
    expect(q.causeMs).toBe(60_000);
    // 1,284 objects a batch: 1.05 times capacity, too close to call either way.
    const close = truthOf('sawtooth-batches', { workers: 128, syncMs: 40_000, rate: 0.02, batchSize: 1_284 })
      .queues[0]!;
    expect(close.expected).toEqual(['WorkqueueSlowWork']);
    expect(close.allowed).toEqual(expect.arrayContaining(['WorkqueueBacklog', 'WorkqueueSaturated']));
    // The default batches drain in about two and a half minutes: nothing.
    expect(truthOf('sawtooth-batches').queues[0]!.expected).toEqual([]);
  });

  it('syncs whose tail runs past five minutes often enough allow a stuck worker, never owe one', () => {
    // 40 s at the median (sigma 0.5): one sync in 36,000 passes 300 s (4 sigma); at 2.82 a second, 0.28 an hour, more
    // than one in an eight-hour shift. At 20 s (5.4 sigma) one in 33 million: none.
    const tail = truthOf('sawtooth-batches', { workers: 128, syncMs: 40_000, rate: 0.02, batchSize: 1_472 }).queues[0]!;
    expect(tail.allowed).toContain('WorkqueueStuckWorker');
    expect(tail.expected).not.toContain('WorkqueueStuckWorker');
    const short = truthOf('sawtooth-batches', { workers: 128, syncMs: 20_000, rate: 0.02, batchSize: 1_472 })
      .queues[0]!;
    expect(short.allowed).not.toContain('WorkqueueStuckWorker');
  });

  it('no events: nothing blocks and nothing gets stuck', () => {
    expect(truthOf('blocking-call', { rate: 0 }).queues[0]!.expected).toEqual([]);
    expect(truthOf('stuck-worker', { rate: 0 }).queues[0]!.expected).toEqual([]);
  });

  it("a load's syncs that block owe slow work beside the load's own findings, whatever the scenario", () => {
    // 8 workers of 30 s syncs at the median (log-normal, sigma 0.6): most syncs pass 10 s, a dozen a minute.
    const backlog = truthOf('backlog', { workers: 8, syncMs: 30_000, rate: 0.25 }).queues[0]!;
    expect(backlog.expected).toEqual(['WorkqueueBacklog', 'WorkqueueSlowWork']);
    for (const name of ['saturation', 'busy-but-fine', 'gradual-backlog', 'bulk-change']) {
      expect(truthOf(name, { syncMs: 30_000 }).queues[0]!.expected, name).toContain('WorkqueueSlowWork');
    }
    // Syncs of half a second never pass 10 s: the load's truth alone.
    expect(truthOf('backlog', { workers: 4, syncMs: 500, keys: 360 }).queues[0]!.expected).toEqual([
      'WorkqueueBacklog',
    ]);
  });
});
