/**
 * Targets without work-queue series: a standby replica (by design) and a leader whose work-queue
 * metrics provider was never registered (a problem).
 */
import type { Scenario } from '../model.js';
import { leaseName } from './common.js';
import { healthyController, requeueAfterController } from './near-misses.js';

export const standby: Scenario = {
  name: 'standby',
  summary: 'a replica that is not the leader: no queues, by design',
  description:
    'The second replica of an operator with leader election. It does not hold the lease ' +
    '(leader_election_master_status 0), so it starts no controller and has no work-queue series; it polls the ' +
    'lease every 2 s. In the controller-runtime flavor its per-controller series exist at zero. To be reported as ' +
    'standby, not as not observable.',
  defaults: { workers: 4, keys: 800, rate: 4 },
  build: (params) => ({
    leader: false,
    leaseName: leaseName(params.flavor, 'cert-operator'),
    controllers: [requeueAfterController(params), healthyController(params, 'issuer')],
    targetTruth: {
      controller: null,
      expected: [],
      allowed: [],
      status: 'standby',
      note: 'not the leader: no queues by design',
    },
  }),
};

export const notObservable: Scenario = {
  name: 'not-observable',
  summary: 'controller-runtime metrics present, workqueue_* absent',
  description:
    'A healthy certificate controller (800 objects, 4 events per second) whose process never registered a ' +
    "client-go work-queue metrics provider (another package claimed client-go's global provider first): " +
    'controller_runtime_* series are there and moving, workqueue_* are absent. In the component-base flavor only ' +
    'the REST client and leader-election series remain.',
  defaults: { workers: 4, keys: 800, rate: 4 },
  build: (params) => {
    const controller = healthyController(params, 'certificate');
    return {
      leader: true,
      leaseName: leaseName(params.flavor, 'cert-operator'),
      controllers: [
        {
          ...controller,
          workqueueMetrics: false,
          truth: {
            expected: ['WorkqueueNotObservable'],
            allowed: [],
            note: 'the work-queue metrics provider is not registered',
          },
        },
      ],
    };
  },
};
