/** Every observation, in the order the report and the text list them: likely loops, retries, draining lists. */
import type { ObservationDefinition } from '../observation.js';
import { highAddRateLowDepth } from './high-add-rate-low-depth.js';
import { listDraining } from './list-draining.js';
import { retriesWithoutErrorMetrics } from './retries-without-error-metrics.js';

export const OBSERVATIONS: readonly ObservationDefinition[] = [
  highAddRateLowDepth,
  retriesWithoutErrorMetrics,
  listDraining,
] as readonly ObservationDefinition[];
