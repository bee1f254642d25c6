/**
 * Several controllers in one process, each with its own problem (or none), each queue with its own
 * ground truth. The REST client counter is per process: the hot loop's writes are visible to all.
 */
import type { ControllerSpec, Scenario } from '../model.js';
import { backlogController } from './capacity.js';
import { leaseName } from './common.js';
import { persistentFailureController } from './failures.js';
import { statusWriteLoopController } from './hot-loops.js';
import { healthyController } from './near-misses.js';
import { blockingCallController } from './slow-work.js';

export const mixed: Scenario = {
  name: 'mixed',
  summary: 'five controllers in one process: healthy, hot loop, backlog, persistent failures, blocking call',
  description:
    'A platform operator running five controllers, each as in its own scenario: deployment (healthy), ' +
    'ingress-status (hot-loop-status-write), pod (backlog), dbuser (persistent-failure), volumesnapshot ' +
    '(blocking-call). --workers, --keys and --rate apply to every controller.',
  defaults: { workers: 4, keys: 800, rate: 4 },
  build: (params) => {
    const loop = statusWriteLoopController(params, 'ingress-status');
    const others = [
      healthyController(params, 'deployment'),
      backlogController(params, 'pod'),
      persistentFailureController(params, 'dbuser'),
      blockingCallController(params, 'volumesnapshot'),
    ];
    const [deployment, pod, dbuser, volumesnapshot] = others;
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'platform-operator'),
      controllers: [deployment!, withSharedWrites(loop, others), pod!, dbuser!, volumesnapshot!],
    };
  },
};

/**
 * Share of the loop's writes at or above which the other controllers' syncs, at one write each, could make that
 * share of them: the process's one write counter then does not say whose the writes are, and a loop is only allowed.
 * Under it, more than half the writes that match the loop's adds must be its own.
 */
const OTHERS_WRITE_HALF = 0.5;

/**
 * The loop's truth beside the other controllers of its process: the REST client counts every controller's writes
 * together, so the loop's writes are told as its own only where the others sync fewer than half as often as it
 * writes (each other controller syncs its arrivals, or its capacity when they exceed it).
 */
function withSharedWrites(loop: ControllerSpec, others: readonly ControllerSpec[]): ControllerSpec {
  const loopWrites = Number(loop.facts?.expectedLoopAddsPerSecond ?? 0);
  const otherSyncs = others.reduce((sum, c) => {
    const capacity = c.facts?.capacityPerSecond;
    return sum + (typeof capacity === 'number' ? Math.min(c.events.rate, capacity) : c.events.rate);
  }, 0);
  if (!loop.truth.expected.includes('WorkqueueHotLoop') || otherSyncs < OTHERS_WRITE_HALF * loopWrites) return loop;
  return {
    ...loop,
    truth: {
      ...loop.truth,
      expected: loop.truth.expected.filter((id) => id !== 'WorkqueueHotLoop'),
      allowed: [...loop.truth.allowed, 'WorkqueueHotLoop'],
      note: `${loop.truth.note ?? ''}; the other controllers sync about ${Math.round(otherSyncs)} times a second against the loop's ${Math.round(loopWrites)} writes: at one write per sync they could make half the loop's writes or more, and the process's one write counter does not say whose they are`,
    },
    facts: { ...loop.facts, otherControllersSyncsPerSecond: Math.round(otherSyncs) },
  };
}
