/** Units of signal values, as the report schema spells them. */
export type Unit = 's' | '1/s' | 'items' | 'workers' | 'ratio';

/**
 * A measured value. `value` is null when it could not be computed, and `missing` says why;
 * `bound: "ge"` marks a quantile that lies in the +Inf bucket, whose value is then the highest finite bound.
 */
export type SignalValue = {
  readonly value: number | null;
  readonly unit: Unit;
  readonly bound?: 'ge';
  readonly missing?: 'insufficient_data' | 'metric_absent';
};
