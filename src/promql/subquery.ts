/**
 * Subqueries, `fn((expr)[window:step])`, as Prometheus evaluates them (engine.go): `expr` is evaluated at every
 * multiple of the step after `t - window` through `t`, each point stamped with its step time, and `fn` reads those
 * points as a range function reads a series' samples. The window is open at its start (Prometheus 3, VictoriaMetrics;
 * Prometheus 2 includes a step on the start, and is sent the window a millisecond shorter: render.ts).
 *
 * A service evaluates at successive times whose windows overlap, so the inner vectors are kept by step time
 * (`StepVectors`): each new evaluation time computes only the steps it adds. A vector at a step time reads the
 * samples of the five minutes' lookback before it, so it holds until a sample is written at or before that time.
 */
import { groupKeyOf, withoutMetricName } from './derived-labels.js';
import type { Expr } from './expr.js';
import { rangeOverSeries, type SeriesPoints } from './functions.js';
import { labelSetsOf } from './input-plans.js';
import type { InstantVector, Labels } from './vector.js';

type SubqueryExpr = Extract<Expr, { kind: 'subquery' }>;

/** The step times of a subquery evaluated at `atMs`: multiples of `stepMs` in `(atMs - windowMs, atMs]`. */
export function stepTimes(atMs: number, windowMs: number, stepMs: number): number[] {
  const times: number[] = [];
  for (let t = (Math.floor((atMs - windowMs) / stepMs) + 1) * stepMs; t <= atMs; t += stepMs) times.push(t);
  return times;
}

/**
 * An inner vector at one step, as kept: its label sets (one list object shared by the steps whose vectors have the
 * same label sets, as an operator's output has them evaluation after evaluation) and its values.
 */
export type StepVector = { readonly labels: readonly Labels[]; readonly values: Float64Array };

/** `vector` as a step vector, its label list `previous` where it holds the same label sets in the same order. */
export function stepVectorOf(vector: InstantVector, previous?: readonly Labels[]): StepVector {
  const own = labelSetsOf(vector);
  const labels = previous !== undefined && sameLabelSets(own, previous) ? previous : own;
  return { labels, values: Float64Array.from(vector, (sample) => sample.value) };
}

function sameLabelSets(a: readonly Labels[], b: readonly Labels[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Inner vectors of subqueries by expression and step time. Contract: `vectorAt(expr, t, compute)` is `compute()` as
 * a step vector, or what it gave for an equal expression (the same tree, by content) at the same `t` since that time
 * was last forgotten. The owner forgets what the data it was computed from no longer says (`forgetFrom`) and what no
 * window reads any more (`forgetBefore`). Memory: a step holds 8 bytes a series and its label list, shared with the
 * step before it where the label sets are the same.
 */
export class StepVectors {
  readonly #byExpr = new Map<string, { byTime: Map<number, StepVector>; lastLabels?: readonly Labels[] }>();
  readonly #keys = new WeakMap<Expr, string>();

  vectorAt(expr: Expr, t: number, compute: () => InstantVector): StepVector {
    let key = this.#keys.get(expr);
    if (key === undefined) {
      key = JSON.stringify(expr);
      this.#keys.set(expr, key);
    }
    let kept = this.#byExpr.get(key);
    if (kept === undefined) {
      kept = { byTime: new Map() };
      this.#byExpr.set(key, kept);
    }
    let vector = kept.byTime.get(t);
    if (vector === undefined) {
      vector = stepVectorOf(compute(), kept.lastLabels);
      kept.lastLabels = vector.labels;
      kept.byTime.set(t, vector);
    }
    return vector;
  }

  /** Forgets every vector at `fromMs` or later (a sample was written there: they may read it). */
  forgetFrom(fromMs: number): void {
    if (fromMs === Number.POSITIVE_INFINITY) return;
    for (const { byTime } of this.#byExpr.values()) for (const t of byTime.keys()) if (t >= fromMs) byTime.delete(t);
  }

  /** Forgets every vector before `beforeMs`. */
  forgetBefore(beforeMs: number): void {
    for (const { byTime } of this.#byExpr.values()) for (const t of byTime.keys()) if (t < beforeMs) byTime.delete(t);
  }
}

/**
 * `expr` at `atMs` from its inner vectors (`innerAt(t)`: `expr.expr` at step time `t`). Series are the inner label
 * sets without the metric name; one present at fewer steps than the function needs is left out, as Prometheus does.
 */
export function subqueryVector(expr: SubqueryExpr, atMs: number, innerAt: (t: number) => StepVector): InstantVector {
  type Points = { labels: Labels; t: number[]; v: number[] };
  const series = new Map<string, Points>();
  // The series of each position of the last label list: looked up once per list, not per step.
  let lastLabels: readonly Labels[] | undefined;
  let slots: Points[] = [];
  for (const t of stepTimes(atMs, expr.windowMs, expr.stepMs)) {
    const { labels, values } = innerAt(t);
    if (labels !== lastLabels) {
      lastLabels = labels;
      slots = labels.map((sampleLabels) => {
        const own = withoutMetricName(sampleLabels);
        const key = groupKeyOf(own);
        let points = series.get(key);
        if (points === undefined) {
          points = { labels: own, t: [], v: [] };
          series.set(key, points);
        }
        return points;
      });
    }
    for (let i = 0; i < slots.length; i++) {
      const points = slots[i] as Points;
      points.t.push(t);
      points.v.push(values[i] as number);
    }
  }
  return rangeOverSeries(expr.fn, series.values() as Iterable<SeriesPoints>, atMs, expr.windowMs, expr.param).samples;
}
