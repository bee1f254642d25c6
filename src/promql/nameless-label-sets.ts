/**
 * The label sets of an operator's output that drops the metric name of each input sample (arithmetic with a
 * scalar, `clamp_min`): derived once per input label sets and kept on the operator's node (input-plans.ts), so an
 * evaluation neither derives them again nor looks them up per series.
 */
import { withoutMetricName } from './derived-labels.js';
import type { Expr } from './expr.js';
import { labelSetsOf, planFor } from './input-plans.js';
import { type InstantVector, type Labels, METRIC_NAME_LABEL } from './vector.js';

/**
 * The label set of each sample of `input` without the metric name, in order; `node` is the operator's. When no
 * sample has a metric name this is the input's own list of label sets, not a copy.
 */
export function namelessLabelSets(node: Expr, input: InstantVector): readonly Labels[] {
  return planFor(node, [input], () =>
    input.some((sample) => METRIC_NAME_LABEL in sample.labels)
      ? input.map((sample) => withoutMetricName(sample.labels))
      : labelSetsOf(input),
  );
}
