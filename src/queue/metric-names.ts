/**
 * The work-queue metric and label names, as client-go's `util/workqueue` and controller-runtime's metrics
 * provider spell them.
 *
 * Contract: the reference queue owns these names and help texts (it is what exports them); the application's
 * metric vocabulary (`src/metrics/names.ts`) takes them from here, so they are spelled once and the queue
 * imports nothing of the application. This module is a leaf: it imports nothing.
 */

/** Work-queue metrics, as client-go's MetricsProvider names them (controller-runtime and component-base). */
export const WORKQUEUE = {
  depth: 'workqueue_depth',
  adds: 'workqueue_adds_total',
  queueDuration: 'workqueue_queue_duration_seconds',
  workDuration: 'workqueue_work_duration_seconds',
  unfinishedWork: 'workqueue_unfinished_work_seconds',
  longestRunningProcessor: 'workqueue_longest_running_processor_seconds',
  retries: 'workqueue_retries_total',
} as const;

/** The labels of work-queue series. */
export const WORKQUEUE_LABEL = {
  /** The queue's name (component-base and controller-runtime). */
  name: 'name',
  /** The controller's name (controller-runtime; equal to the queue's name). */
  controller: 'controller',
  /** The item priority on `workqueue_depth` (controller-runtime; empty for the classic queue). */
  priority: 'priority',
} as const;

const UNFINISHED_HELP_TAIL =
  " that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. " +
  'One can deduce the number of stuck threads by observing the rate at which this increases.';

/**
 * The help text of each work-queue family, as each provider writes it: controller-runtime v0.24's
 * (`pkg/internal/metrics/workqueue.go`, v0.24.0 and v0.24.1) or component-base's (client-go's own provider in
 * kube-controller-manager and friends, with the `[BETA]` stability prefix).
 */
export const WORKQUEUE_HELP: Readonly<
  Record<'controller-runtime' | 'component-base', Readonly<Record<keyof typeof WORKQUEUE, string>>>
> = {
  'controller-runtime': {
    depth: 'Current depth of workqueue by workqueue and priority',
    adds: 'Total number of adds handled by workqueue',
    queueDuration: 'How long in seconds an item stays in workqueue before being requested',
    workDuration: 'How long in seconds processing an item from workqueue takes.',
    unfinishedWork: `How many seconds of work has been done${UNFINISHED_HELP_TAIL}`,
    longestRunningProcessor: 'How many seconds has the longest running processor for workqueue been running.',
    retries:
      'Total number of items added to the workqueue with a non-zero delay ' +
      '(rate-limited requeues, explicit RequeueAfter or AddAfter calls)',
  },
  'component-base': {
    depth: '[BETA] Current depth of workqueue',
    adds: '[BETA] Total number of adds handled by workqueue',
    queueDuration: '[BETA] How long in seconds an item stays in workqueue before being requested.',
    workDuration: '[BETA] How long in seconds processing an item from workqueue takes.',
    unfinishedWork: `[BETA] How many seconds of work has done${UNFINISHED_HELP_TAIL}`,
    longestRunningProcessor: '[BETA] How many seconds has the longest running processor for workqueue been running.',
    retries: '[BETA] Total number of retries handled by workqueue',
  },
};
