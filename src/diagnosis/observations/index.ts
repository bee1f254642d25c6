/** Every observation, in the order the report and the text list them: likely loops, retries, draining lists, a lost view. */
import type { ObservationDefinition } from '../observation.js';
import { highAddRateLowDepth } from './high-add-rate-low-depth.js';
import { listDraining } from './list-draining.js';
import { priorityDepthUnknown } from './priority-depth-unknown.js';
import { retriesWithoutErrorMetrics } from './retries-without-error-metrics.js';
import { steadyReconcileErrors } from './steady-reconcile-errors.js';

export const OBSERVATIONS: readonly ObservationDefinition[] = [
  highAddRateLowDepth,
  retriesWithoutErrorMetrics,
  steadyReconcileErrors,
  listDraining,
  priorityDepthUnknown,
] as readonly ObservationDefinition[];
