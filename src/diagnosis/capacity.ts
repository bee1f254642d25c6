/** Little's law for worker counts, shared by the diagnoses that recommend MaxConcurrentReconciles. */
import type { SignalValue } from './units.js';

/**
 * Workers that carry `offeredLoad` (busy worker-seconds per second: arrivals × mean sync time) at
 * `targetUtilization`, rounded up; insufficient data when the load is unknown.
 */
export function workersFor(offeredLoad: number | undefined, targetUtilization: number): SignalValue {
  return offeredLoad === undefined
    ? { value: null, unit: 'workers', missing: 'insufficient_data' }
    : { value: Math.ceil(offeredLoad / targetUtilization), unit: 'workers' };
}
