/**
 * Which expressions a Prometheus-mode batch computes in-process from their signals (local-conditions.ts), and what
 * it computes from the signals' vectors. The server computing the same conditions whole is compared with it over
 * real Prometheus data in test/diagnosis/parity.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../../src/diagnosis/signals.js';
import { makeLabels } from '../../src/exposition/labels.js';
import { computeLocally, planLocalConditions } from '../../src/prometheus/local-conditions.js';
import { binary, num, selector, signalRef } from '../../src/promql/expr.js';

const depth = signal('depth').expr;
const adds = signal('addRate').expr;
const deep = binary('>=', signalRef('depth', depth), num(20));
const busy = binary('and', deep, binary('>', signalRef('addRate', adds), num(5)));

describe('local conditions', () => {
  it('computes conditions of signals here, each signal asked once; raw reads and bare signals go to the server', () => {
    const raw = binary('>', selector('workqueue_depth'), num(1));
    const plan = planLocalConditions([deep, busy, raw, signalRef('depth', depth), depth]);
    expect(plan.local).toEqual([true, true, false, false, false]);
    expect(plan.leaves).toEqual([depth, adds]);
  });

  it('computes a condition from its signals at one time, with Prometheus semantics', () => {
    const queue = (name: string) =>
      makeLabels([
        ['job', 'j'],
        ['instance', 'i'],
        ['name', name],
      ]);
    const leaves = new Map([
      [
        depth,
        [
          { labels: queue('a'), value: 25 },
          { labels: queue('b'), value: 30 },
          { labels: queue('c'), value: 3 },
        ],
      ],
      [
        adds,
        [
          { labels: queue('a'), value: 9 },
          { labels: queue('b'), value: 1 },
        ],
      ],
    ]);
    expect(computeLocally(busy, leaves, 0)).toEqual([{ labels: queue('a'), value: 25 }]);
  });

  it('treats a signal missing from the leaves as a programming error', () => {
    expect(() => computeLocally(busy, new Map([[depth, []]]), 0)).toThrow(/outside its signals/);
  });
});
