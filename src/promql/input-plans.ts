/**
 * What is derived from the label sets of some inputs (each sample's group, the groups' label sets, match keys, the
 * keys of a list of series), remembered for the next inputs with the same label sets.
 *
 * A running service evaluates the same expressions over the same series every time, so an operator's input holds
 * the same label sets (objects), in the same (storage) order, evaluation after evaluation while no series comes or
 * goes. Its plan is then made once and each evaluation runs over the values alone, without a lookup per label set;
 * what a plan derives from a series is held by the plan only (derived-labels.ts remembers nothing per series).
 *
 * Contract: `plans.of(owner, inputs, make)` returns `make()`, or what `make` returned for earlier inputs under the
 * same owner that had the same label set objects in the same order, input by input. An input is a vector (the label
 * sets of its samples) or a list of label sets. `make` must depend on the label sets of the inputs only, never on
 * the samples' values (label sets are immutable, so its result then holds for any inputs with the same label sets),
 * and what it returns is shared by every caller given it: not to be changed. An owner holds one plan, replaced when
 * its inputs change. `planFor(node, vectors, make)` is `of` on the plans held by expression nodes, which go with
 * their node.
 *
 * Memory: a plan holds its inputs' label sets. A list of label sets is held as given (its caller does not change it
 * afterwards); a vector's are listed when a plan over it is made, shared by the plans made over it meanwhile, and an
 * operator that outputs one sample for each of a list of label sets it holds, in order, says so (`withLabelSets`), so
 * that the plans made over its output hold that list rather than a copy. `labelSetsOf(vector)` is that listing, for a
 * plan that holds its input's label sets as they are.
 */
import type { Expr } from './expr.js';
import type { InstantVector, Labels } from './vector.js';

/** An input whose label sets a plan depends on: a vector, or a list of label sets. */
export type PlanInput = InstantVector | readonly Labels[];

type Remembered = { readonly labels: readonly (readonly Labels[])[]; readonly plan: unknown };

/** Where plans are kept: by expression node (weakly), or by any key. */
type PlanStore<Owner> = {
  get(owner: Owner): Remembered | undefined;
  set(owner: Owner, remembered: Remembered): unknown;
};

export class InputPlans<Owner> {
  readonly #plans: PlanStore<Owner>;

  constructor(store: PlanStore<Owner> = new Map<Owner, Remembered>()) {
    this.#plans = store;
  }

  /** See the module contract. `vectors`: whether the inputs are vectors (else lists of label sets). */
  of<T>(owner: Owner, inputs: readonly PlanInput[], make: () => T, vectors = false): T {
    const remembered = this.#plans.get(owner);
    if (remembered !== undefined && haveLabelSets(inputs, vectors, remembered.labels)) return remembered.plan as T;
    const plan = make();
    this.#plans.set(owner, {
      labels: inputs.map((input) => (vectors ? labelSetsOf(input as InstantVector) : (input as readonly Labels[]))),
      plan,
    });
    return plan;
  }
}

const NODE_PLANS = new InputPlans<Expr>(new WeakMap());

/** The plan of expression node `node` over the vectors `inputs` (see the module contract). */
export function planFor<T>(node: Expr, inputs: readonly InstantVector[], make: () => T): T {
  return NODE_PLANS.of(node, inputs, make, true);
}

/**
 * The label sets of the vectors most recently listed (`withLabelSets`, `labelSetsOf`), by vector, oldest overwritten
 * first. A plan is made from its inputs right after they are evaluated, so the outputs it lists are among the last
 * few; one that has left is listed anew (a copy, made only where a plan is made). A short list rather than a map by
 * vector: an operator's output is recorded at every evaluation, and a plan is made rarely. It holds the last
 * `RECENT_VECTORS` vectors alive, no more.
 */
const RECENT_VECTORS = 16;
const recentVectors: (InstantVector | undefined)[] = new Array(RECENT_VECTORS).fill(undefined);
const recentLabelSets: (readonly Labels[] | undefined)[] = new Array(RECENT_VECTORS).fill(undefined);
let nextRecent = 0;

function remember(vector: InstantVector, labels: readonly Labels[]): void {
  recentVectors[nextRecent] = vector;
  recentLabelSets[nextRecent] = labels;
  nextRecent = (nextRecent + 1) % RECENT_VECTORS;
}

/** `vector`, whose samples have the label sets `labels`, in order (an operator's output); see the module comment. */
export function withLabelSets(vector: InstantVector, labels: readonly Labels[]): InstantVector {
  remember(vector, labels);
  return vector;
}

/** The label sets of `vector`'s samples, in order: the list its operator gave, while it is recent (see above). */
export function labelSetsOf(vector: InstantVector): readonly Labels[] {
  for (let i = 0; i < RECENT_VECTORS; i++)
    if (recentVectors[i] === vector) return recentLabelSets[i] as readonly Labels[];
  const labels = vector.map((sample) => sample.labels);
  remember(vector, labels);
  return labels;
}

/** Whether each of `inputs` has, in order, the label sets (the same objects) of `labels`. */
function haveLabelSets(
  inputs: readonly PlanInput[],
  vectors: boolean,
  labels: readonly (readonly Labels[])[],
): boolean {
  if (inputs.length !== labels.length) return false;
  for (let k = 0; k < inputs.length; k++) {
    const input = inputs[k] as PlanInput;
    const expected = labels[k] as readonly Labels[];
    if (input.length !== expected.length) return false;
    if (vectors) {
      const samples = input as InstantVector;
      for (let i = 0; i < samples.length; i++)
        if ((samples[i] as { labels: Labels }).labels !== expected[i]) return false;
    } else {
      const sets = input as readonly Labels[];
      for (let i = 0; i < sets.length; i++) if (sets[i] !== expected[i]) return false;
    }
  }
  return true;
}
