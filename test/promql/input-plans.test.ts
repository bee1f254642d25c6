/**
 * What operators derive from their inputs' label sets is remembered on their node: reused for inputs with the same
 * label sets in the same order, made again for any other, and the results are those of a fresh evaluation.
 */
import { describe, expect, it } from 'vitest';
import { makeLabels } from '../../src/exposition/labels.js';
import { aggregate } from '../../src/promql/aggregation.js';
import { aggregateBy, selector } from '../../src/promql/expr.js';
import { planFor } from '../../src/promql/input-plans.js';
import type { InstantVector } from '../../src/promql/vector.js';

const a = makeLabels([
  ['job', 'x'],
  ['name', 'a'],
]);
const b = makeLabels([
  ['job', 'x'],
  ['name', 'b'],
]);
const vector = (entries: readonly (readonly [typeof a, number])[]): InstantVector =>
  entries.map(([labels, value]) => ({ labels, value }));

describe('input plans', () => {
  it('are reused for the same label sets in the same order, and made again otherwise', () => {
    const node = selector('m');
    let made = 0;
    const make = () => ++made;
    /** The plan `node` gets for inputs of these label sets and values, one vector each. */
    const planOf = (...inputs: (readonly (readonly [typeof a, number])[])[]) => planFor(node, inputs.map(vector), make);
    expect(
      planOf([
        [a, 1],
        [b, 2],
      ]),
    ).toBe(1);
    expect(
      planOf([
        [a, 5],
        [b, 6],
      ]),
    ).toBe(1);
    expect(
      planOf([
        [b, 5],
        [a, 6],
      ]),
    ).toBe(2);
    expect(planOf([[b, 5]])).toBe(3);
    // Equal contents in other objects are other label sets.
    const otherB = makeLabels([
      ['job', 'x'],
      ['name', 'b'],
    ]);
    expect(planOf([[otherB, 5]])).toBe(4);
    expect(planOf([[b, 5]], [])).toBe(5);
    expect(planFor(selector('m'), [vector([[b, 5]]), vector([])], make)).toBe(6);
  });

  it('give an aggregation the values of each evaluation', () => {
    const node = aggregateBy('sum', ['job'], selector('m'));
    if (node.kind !== 'aggregate') throw new Error('an aggregation');
    expect(
      aggregate(
        node,
        vector([
          [a, 1],
          [b, 2],
        ]),
      ),
    ).toEqual([{ labels: { job: 'x' }, value: 3 }]);
    expect(
      aggregate(
        node,
        vector([
          [a, 10],
          [b, 20],
        ]),
      ),
    ).toEqual([{ labels: { job: 'x' }, value: 30 }]);
    expect(aggregate(node, vector([[b, 7]]))).toEqual([{ labels: { job: 'x' }, value: 7 }]);
  });
});
