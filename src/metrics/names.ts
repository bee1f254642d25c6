/**
 * The metric vocabulary: every metric and label name this project reads, writes or queries.
 *
 * Contract: no other module spells a metric name. Exporters (the simulator), readers (signals, parser
 * filters), generators (dashboards, alert rules) and the service's own metrics import them from here, so a
 * rename is one edit.
 * The work-queue names themselves belong to the reference queue that exports them (`src/queue/metric-names.ts`);
 * they are re-exported here, so this module imports only that leaf.
 */
import { WORKQUEUE, WORKQUEUE_LABEL } from '../queue/metric-names.js';

export { WORKQUEUE };

/** controller-runtime's per-controller metrics, used when present. */
export const CONTROLLER_RUNTIME = {
  reconcileTotal: 'controller_runtime_reconcile_total',
  reconcileErrors: 'controller_runtime_reconcile_errors_total',
  reconcileTime: 'controller_runtime_reconcile_time_seconds',
  activeWorkers: 'controller_runtime_active_workers',
  maxConcurrentReconciles: 'controller_runtime_max_concurrent_reconciles',
  reconcilePanics: 'controller_runtime_reconcile_panics_total',
  terminalReconcileErrors: 'controller_runtime_terminal_reconcile_errors_total',
} as const;

/** client-go REST client and leader election. */
export const CLIENT_GO = {
  restClientRequests: 'rest_client_requests_total',
  leaderElectionMasterStatus: 'leader_election_master_status',
} as const;

/** Label names. */
export const LABEL = {
  ...WORKQUEUE_LABEL,
  le: 'le',
  quantile: 'quantile',
  result: 'result',
  code: 'code',
  method: 'method',
  host: 'host',
  job: 'job',
  instance: 'instance',
  namespace: 'namespace',
  pod: 'pod',
  container: 'container',
  rule: 'rule',
  severity: 'severity',
  target: 'target',
  status: 'status',
  metricName: '__name__',
} as const;

/** Values of `controller_runtime_reconcile_total{result}`. */
export const RECONCILE_RESULT = {
  success: 'success',
  error: 'error',
  requeue: 'requeue',
  requeueAfter: 'requeue_after',
} as const;
export type ReconcileResult = (typeof RECONCILE_RESULT)[keyof typeof RECONCILE_RESULT];

/** `rest_client_requests_total{code}` of an optimistic-concurrency conflict (a write on a stale resourceVersion). */
export const CONFLICT_CODE = '409';

/**
 * `workqueue_depth{priority}` values below zero: controller-runtime's priority queue adds initial-list and
 * resync events at `handler.LowPriority` (-100), real changes at 0 (or higher); the classic queue writes `""`.
 */
export const NEGATIVE_PRIORITY_PATTERN = '-[0-9]+';
/** `workqueue_depth{priority}` values of the priority queue's real changes: 0 and above (never the classic `""`). */
export const NON_NEGATIVE_PRIORITY_PATTERN = '[0-9]+';
/**
 * `workqueue_depth{priority}` values that are a priority at all (Go's `strconv.Itoa`). Anything else, such as the
 * `exceeded_cardinality_limit` controller-runtime writes once a queue has seen more than 25 distinct priorities
 * (from then on every increment and decrement, at any priority, goes there and the other series keep their last
 * values), is depth whose priority is unknown.
 */
export const PRIORITY_NUMBER_PATTERN = '-?[0-9]+';

/** HTTP methods that count as writes in `rest_client_requests_total`. */
export const WRITE_METHODS = ['PUT', 'PATCH', 'POST'] as const;

/** Suffixes of histogram and summary series. */
export const SUFFIX = {
  bucket: '_bucket',
  sum: '_sum',
  count: '_count',
  created: '_created',
  total: '_total',
} as const;

/** The service's own metrics. */
export const DOCTOR = {
  /** 1 per active (firing) finding; labels in `DOCTOR_FINDING_LABELS`. */
  finding: 'workqueue_doctor_finding',
  /** Per pending finding: the unix time it fires if its condition keeps holding; labels in `DOCTOR_FINDING_LABELS`. */
  pendingFinding: 'workqueue_doctor_pending_finding_fires_at_seconds',
  /** 1 per rule that could not be judged for a queue; labels in `DOCTOR_UNKNOWN_LABELS`. */
  unknownRule: 'workqueue_doctor_unknown_rule',
  scrapeDuration: 'workqueue_doctor_scrape_duration_seconds',
  scrapeErrors: 'workqueue_doctor_scrape_errors_total',
  targetUp: 'workqueue_doctor_target_up',
  evaluationDuration: 'workqueue_doctor_evaluation_duration_seconds',
  evaluationErrors: 'workqueue_doctor_evaluation_errors_total',
  stateWriteErrors: 'workqueue_doctor_state_write_errors_total',
  queues: 'workqueue_doctor_queues',
} as const;
export const DOCTOR_FINDING_LABELS = [LABEL.rule, LABEL.severity, LABEL.target, LABEL.name, LABEL.controller] as const;
export const DOCTOR_UNKNOWN_LABELS = [LABEL.rule, LABEL.target, LABEL.name, LABEL.controller] as const;

/**
 * Prometheus' own series of pending and firing alerts (one per alert instance, value 1, carrying the alert's
 * labels): dashboards read the generated rules' verdicts from it.
 */
export const PROMETHEUS_ALERTS = {
  series: 'ALERTS',
  alertNameLabel: 'alertname',
  alertStateLabel: 'alertstate',
  firing: 'firing',
} as const;

/**
 * The series a scraper writes of its own for every scrape of a target, as Prometheus does: `up{job,instance}`,
 * 1 when the scrape succeeded, 0 when it failed (or the target went away). A recording carries it, so a replay
 * knows the scrapes and marks the series that left with one stale, as the live history did.
 */
export const SCRAPE_HEALTH = { up: 'up' } as const;

/**
 * The families whose series make a work queue: the engine finds a queue wherever a series of one of them is, keyed
 * by its labels (`queueKey` in diagnosis/identity.ts), and the scrape limits count queues the same way.
 */
export const QUEUE_FAMILIES: readonly string[] = [WORKQUEUE.depth, WORKQUEUE.adds];

/** Families the diagnoses read; a parser may skip everything else. */
export const DIAGNOSTIC_FAMILIES: readonly string[] = [
  ...Object.values(WORKQUEUE),
  ...Object.values(CONTROLLER_RUNTIME),
  ...Object.values(CLIENT_GO),
];
