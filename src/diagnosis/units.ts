/**
 * Units of signal values and the measured value itself, as the report schema spells them: both are defined in
 * `report-schema.ts` (`UNITS`, `SignalValueSchema`).
 *
 * A `SignalValue`'s `value` is null when it could not be computed, and `missing` says why; `bound: "ge"` marks
 * a quantile that lies in the +Inf bucket, whose value is then the highest finite bound.
 */
export type { MissingReason, SignalValue, Unit } from './report-schema.js';
