/**
 * What an operator derives from the label sets of its input vector (each sample's group, the groups' label sets,
 * match keys), remembered on the operator's node for its next input with the same label sets.
 *
 * A running service evaluates the same expressions over the same series every time, so an operator's input holds
 * the same label sets (objects), in the same (storage) order, evaluation after evaluation while no series comes or
 * goes. Its plan is then made once and each evaluation runs over the values alone; derived-labels.ts remembers
 * derivations per label set, this remembers them per input, without a lookup per sample.
 *
 * Contract: `planFor(node, inputs, make)` returns `make()`, or what `make` returned for earlier inputs of the same
 * node whose samples had the same label set objects in the same order, input by input. `make` must depend on the
 * label sets of the inputs only, never on their values (label sets are immutable, so its result then holds for any
 * inputs with the same label sets). A node holds one plan, replaced when its inputs change, and it goes with the
 * node.
 */
import type { Expr } from './expr.js';
import type { InstantVector, Labels } from './vector.js';

type Remembered = { readonly labels: readonly (readonly Labels[])[]; readonly plan: unknown };

const PLANS = new WeakMap<Expr, Remembered>();

export function planFor<T>(node: Expr, inputs: readonly InstantVector[], make: () => T): T {
  const remembered = PLANS.get(node);
  if (remembered !== undefined && haveLabelSets(inputs, remembered.labels)) return remembered.plan as T;
  const plan = make();
  PLANS.set(node, { labels: inputs.map((input) => input.map((sample) => sample.labels)), plan });
  return plan;
}

/** Whether each of `inputs` has, sample by sample, the label sets (the same objects) of `labels`. */
function haveLabelSets(inputs: readonly InstantVector[], labels: readonly (readonly Labels[])[]): boolean {
  if (inputs.length !== labels.length) return false;
  for (let k = 0; k < inputs.length; k++) {
    const input = inputs[k] as InstantVector;
    const expected = labels[k] as readonly Labels[];
    if (input.length !== expected.length) return false;
    for (let i = 0; i < input.length; i++) if ((input[i] as { labels: Labels }).labels !== expected[i]) return false;
  }
  return true;
}
