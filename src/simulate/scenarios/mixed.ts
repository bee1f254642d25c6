/**
 * Several controllers in one process, each with its own problem (or none), each queue with its own
 * ground truth. The REST client counter is per process: the hot loop's writes are visible to all.
 */
import type { Scenario } from '../model.js';
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
  build: (params) => ({
    leader: true,
    leaseName: leaseName(params.flavor, 'platform-operator'),
    controllers: [
      healthyController(params, 'deployment'),
      statusWriteLoopController(params, 'ingress-status'),
      backlogController(params, 'pod'),
      persistentFailureController(params, 'dbuser'),
      blockingCallController(params, 'volumesnapshot'),
    ],
  }),
};
