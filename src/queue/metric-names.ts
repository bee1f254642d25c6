/**
 * The work-queue metric and label names, as client-go's `util/workqueue` and controller-runtime's metrics
 * provider spell them.
 *
 * Contract: the reference queue owns these names (it is what exports them); the application's metric
 * vocabulary (`src/metrics/names.ts`) takes them from here, so they are spelled once and the queue imports
 * nothing of the application. This module is a leaf: it imports nothing.
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
