import { CLIENT_GO, CONTROLLER_RUNTIME, WORKQUEUE } from '../../metrics/names.js';
import { aggregateBy, binary, num, selector } from '../../promql/expr.js';
import { formatDuration } from '../../util/duration.js';
import { TARGET_LABELS } from '../identity.js';
import { conditionHeld, defineRule, type RuleCase, type TargetAssessment, type TargetFacts } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

const perTarget = (metric: string) => aggregateBy('count', TARGET_LABELS, selector(metric));
const onTarget = { on: TARGET_LABELS };

/**
 * Not observable: a controller whose work queues cannot be seen. The alert form finds controller-runtime
 * managers that expose their controller metrics but no `workqueue_*` (almost always the client-go metrics
 * provider claimed by another package); standby replicas (leader election lost, no queues by design) are
 * excluded. The service also raises it for its own targets that cannot be scraped or expose no work-queue
 * metrics at all, which a Prometheus alert cannot tell from any other target.
 */
const NOT_OBSERVABLE_CASES = {
  'provider-claimed': {
    when: 'controller_runtime_* metrics are present but workqueue_* are not',
    cause:
      "The client-go work-queue metrics provider was claimed by another package. client-go accepts only the first workqueue.SetProvider call; importing k8s.io/component-base/metrics/prometheus/workqueue (often indirectly, through a kube-controller-manager or apiserver library) registers it on the legacy registry instead of controller-runtime's.",
    fix: "Find the import that pulls in k8s.io/component-base/metrics/prometheus/workqueue (go mod why, go list -deps) and drop it, or register the legacy registry with controller-runtime's (metrics.Registry.Register(legacyregistry.DefaultGatherer...)) so both sets are served.",
  },
  unreadable: {
    when: 'the service cannot scrape the target, or the page has no work-queue metrics at all',
    cause:
      'The target cannot be read, or it exposes no work-queue metrics at all: wrong port or path, TLS or authorization refused, the process is down, or it is not a controller.',
    fix: 'Check the metrics address and path (controller-runtime serves :8080/metrics, or :8443/metrics over HTTPS with authorization in kubebuilder layouts), the bearer token and RBAC (get on the non-resource URL /metrics), and that the pod is running.',
  },
} as const satisfies Record<string, RuleCase>;

const notObservableForMs = 5 * MINUTE_MS;

export const notObservable = defineRule({
  id: 'WorkqueueNotObservable',
  title: 'Work queue not observable',
  severity: 'warning',
  scope: 'target',
  thresholds: {},
  forMs: notObservableForMs,
  // One presence check stands for every work-queue metric: a metrics provider creates a queue's adds counter with
  // its other counters and histograms, together, when the queue is made (client-go's provider interface, component-
  // base's, controller-runtime's for both its queues); no provider, no workqueue_* at all. Not the depth gauge: the
  // priority queue's has a series per priority, made at the first add of that priority, so a queue no event has
  // reached yet (a quiet controller just started) has none.
  condition: () =>
    binary(
      'unless',
      binary('unless', perTarget(CONTROLLER_RUNTIME.reconcileTotal), perTarget(WORKQUEUE.adds), onTarget),
      binary('==', selector(CLIENT_GO.leaderElectionMasterStatus), num(0)),
      onTarget,
    ),
  evidence: ['reconcileRate', 'leaderStatus'],
  assessTarget: assessNotObservable,
  text: {
    summary: ({ detail }) =>
      detail === undefined
        ? 'Controller metrics are exposed but no workqueue_* metrics: the work queues cannot be diagnosed.'
        : `The work queues cannot be diagnosed: ${detail}.`,
    meaning:
      "Nothing can be said about this controller's queues: backlogs, hot loops and stuck workers go unseen, and the alerts built on workqueue_* never fire.",
    cause: ({ detail }) => NOT_OBSERVABLE_CASES[detail === undefined ? 'provider-claimed' : 'unreadable'].cause,
    fix: ({ detail }) => NOT_OBSERVABLE_CASES[detail === undefined ? 'provider-claimed' : 'unreadable'].fix,
    cases: [NOT_OBSERVABLE_CASES['provider-claimed'], NOT_OBSERVABLE_CASES.unreadable],
    confirm: [
      { text: 'Controller metrics exist for the target while work-queue metrics do not:', signals: ['reconcileRate'] },
      { text: 'The replica is the leader (a standby has no queues by design):', signals: ['leaderStatus'] },
    ],
  },
});

/**
 * A target with queues is judged by the condition alone (a scrape error leaves its queues' recent data to
 * speak). A target without queues: not observable when it cannot be read (the scrape error is the detail), when the
 * condition held for the whole `for` (the condition itself excludes standby replicas), or when the service
 * was told to read it and it exposes no controller or work-queue metrics at all and leads. Controller
 * metrics without queues not yet for the full `for` leave it unknown; a standby replica is left to be
 * reported as one.
 */
function assessNotObservable(target: TargetFacts): TargetAssessment | undefined {
  if (target.hasQueues) return conditionHeld(target);
  if (target.error !== undefined) return { kind: 'finding', sinceMs: null, detail: target.error.message };
  if (target.holdingSinceMs !== undefined) return conditionHeld(target);
  if (target.standby) return undefined;
  if (target.hasControllerMetrics) {
    return {
      kind: 'unknown',
      reason: `controller metrics are exposed without work-queue metrics, not yet for the rule's for (${formatDuration(notObservableForMs)})`,
    };
  }
  if (target.listed) return { kind: 'finding', sinceMs: null, detail: 'it exposes no workqueue_* metrics at all' };
  return undefined;
}
