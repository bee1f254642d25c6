/**
 * PromQL aggregations (`sum`, `max`, `min`, `count`, `avg`, `by` or `without` labels) of an instant vector: its
 * samples grouped by their labels, remembered on the aggregation's node while its input keeps its label sets
 * (input-plans.ts), then each group's values reduced in input order, as Prometheus adds them.
 */
import { labelsOnly, labelsWithout, signatureOf, signatureWithoutOf, withoutMetricName } from './derived-labels.js';
import type { AggregateOp, Expr } from './expr.js';
import { type Grouping, GroupNumbering } from './grouping.js';
import { planFor, withLabelSets } from './input-plans.js';
import type { InstantVector, VectorSample } from './vector.js';

export type AggregateExpr = Extract<Expr, { kind: 'aggregate' }>;

export function aggregate(expr: AggregateExpr, input: InstantVector): InstantVector {
  const { groupOf, labels } = planFor(expr, [input], () => groupingOf(expr, input));
  const values = reduceByGroup(expr.op, input, groupOf, labels.length);
  const out: VectorSample[] = [];
  for (let group = 0; group < labels.length; group++)
    out.push({ labels: labels[group] as VectorSample['labels'], value: values[group] as number });
  return withLabelSets(out, labels);
}

/** The groups of `expr` over `input`, with the label sets of the aggregation's output. */
function groupingOf(expr: AggregateExpr, input: InstantVector): Grouping {
  const { mode, labels: names } = expr;
  const groups = new GroupNumbering();
  const groupOf = new Int32Array(input.length);
  input.forEach((sample, i) => {
    // The key from the sample's own labels; the group's labels are made once, for its first sample.
    const key = mode === 'by' ? signatureOf(sample.labels, names) : signatureWithoutOf(sample.labels, names);
    groupOf[i] =
      groups.numberOf(key) ??
      groups.open(
        key,
        mode === 'by' ? labelsOnly(sample.labels, names) : withoutMetricName(labelsWithout(sample.labels, names)),
      );
  });
  return { groupOf, labels: groups.labels };
}

/**
 * Each group's values reduced by `op`, in input order: sums from 0 adding one value after another; PromQL's `max`
 * and `min` ignore NaN unless every value is NaN.
 */
function reduceByGroup(op: AggregateOp, input: InstantVector, groupOf: Int32Array, groups: number): Float64Array {
  const reduced = new Float64Array(groups).fill(op === 'max' || op === 'min' ? Number.NaN : 0);
  const sizes = op === 'avg' ? new Float64Array(groups) : undefined;
  for (let i = 0; i < input.length; i++) {
    const group = groupOf[i] as number;
    const value = (input[i] as VectorSample).value;
    const current = reduced[group] as number;
    switch (op) {
      case 'sum':
        reduced[group] = current + value;
        break;
      case 'avg':
        reduced[group] = current + value;
        (sizes as Float64Array)[group] = ((sizes as Float64Array)[group] as number) + 1;
        break;
      case 'count':
        reduced[group] = current + 1;
        break;
      case 'max':
        if (Number.isNaN(current) || value > current) reduced[group] = value;
        break;
      case 'min':
        if (Number.isNaN(current) || value < current) reduced[group] = value;
        break;
    }
  }
  if (sizes !== undefined)
    for (let group = 0; group < groups; group++) reduced[group] = (reduced[group] as number) / (sizes[group] as number);
  return reduced;
}
