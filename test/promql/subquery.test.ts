/**
 * Subqueries: their step times as Prometheus 2.42 aligns them, the whole depth's slope of a priority queue whose
 * depth series is born with its keys, and inner vectors kept across evaluations but never past a late write.
 * (Agreement with a real Prometheus over resets, gaps and off-grid times: test/metrics/prometheus-parity.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/exposition/parser.js';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { type Expr, quantileOverSubquery, rangeFn, subquery, sumWithout } from '../../src/promql/expr.js';
import { createStoreBackend, historyStore } from '../../src/promql/history-backend.js';
import { StepVectors, stepTimes } from '../../src/promql/subquery.js';
import { History, type ScrapeTarget } from '../../src/store/history.js';
import { evaluateOver } from '../support/history-range.js';
import { WHOLE_DEPTH } from '../support/whole-depth.js';

/** On the 15 s grid: the subqueries' steps fall on the scrapes. */
const T0 = 1_700_000_010_000;
const S = 1000;
const TARGET: ScrapeTarget = { id: 'ctrl/a:1', labels: { job: 'ctrl', instance: 'a:1' } };

const slope = (windowMs: number): Expr => subquery('deriv', WHOLE_DEPTH, windowMs, 15 * S);

describe('subquery step times', () => {
  it('are the multiples of the step after the window start through its end', () => {
    expect(stepTimes(100 * S, 60 * S, 15 * S)).toEqual([45 * S, 60 * S, 75 * S, 90 * S]);
    // A window start on a step is left out (the window is open there, as Prometheus 3 has it); an end on one is not.
    expect(stepTimes(120 * S, 60 * S, 15 * S)).toEqual([75 * S, 90 * S, 105 * S, 120 * S]);
    expect(stepTimes(120 * S + 1, 60 * S, 15 * S)).toEqual([75 * S, 90 * S, 105 * S, 120 * S]);
    expect(stepTimes(120 * S - 1, 60 * S, 15 * S)).toEqual([60 * S, 75 * S, 90 * S, 105 * S]);
  });
});

describe('the whole depth slope', () => {
  /** A priority queue: adds counted from T0, its priority-0 depth series born at 5 minutes holding 300 keys. */
  function bornWithItsKeys(): History {
    const h = new History();
    for (let i = 0; i <= 40; i++) {
      const atMs = T0 + 15 * S * i;
      const depth = i >= 20 ? `${WORKQUEUE.depth}{name="q",priority="0"} 300\n` : '';
      h.append(TARGET, parseExposition(`${WORKQUEUE.adds}{name="q"} ${i >= 20 ? 300 : 0}\n${depth}`), atMs);
    }
    return h;
  }

  it('reads the rise of a depth series born holding keys, which its own slope cannot see', () => {
    const h = bornWithItsKeys();
    const at = T0 + 10 * 60 * S;
    const perSeries = evaluateOver(h, sumWithout([LABEL.priority], rangeFn('deriv', WORKQUEUE.depth, 600 * S)), at);
    expect(perSeries.map((s) => s.value)).toEqual([0]);
    // Steps 1 to 40 (the window's start, step 0, is left out): 19 points at 0, then 21 at 300, 15 s apart; the
    // least-squares slope of that step function.
    const times = Array.from({ length: 40 }, (_, i) => (i + 1) * 15);
    const values = times.map((t) => (t >= 300 ? 300 : 0));
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const [mt, mv] = [mean(times), mean(values)];
    const expected =
      times.reduce((acc, t, i) => acc + (t - mt) * ((values[i] as number) - mv), 0) /
      times.reduce((acc, t) => acc + (t - mt) ** 2, 0);
    const whole = evaluateOver(h, slope(600 * S), at);
    expect(whole).toHaveLength(1);
    expect(whole[0]?.labels).toEqual({ name: 'q', job: 'ctrl', instance: 'a:1' });
    expect(whole[0]?.value).toBeCloseTo(expected, 9);
  });
});

describe('the median of a rate over a subquery', () => {
  /** A counter rising 10 a second, which jumps by 3,000 at once (a resync queueing every object) at 3 minutes. */
  function steadyWithOneBurst(): History {
    const h = new History();
    for (let i = 0; i <= 40; i++) {
      const atMs = T0 + 15 * S * i;
      const count = 150 * i + (i >= 12 ? 3000 : 0);
      h.append(TARGET, parseExposition(`${WORKQUEUE.adds}{name="q"} ${count}\n`), atMs);
    }
    return h;
  }
  const perQueueRate = (windowMs: number): Expr =>
    sumWithout([LABEL.priority], rangeFn('rate', WORKQUEUE.adds, windowMs));

  it('reads the steady rate where the burst lifts the rate over the whole window', () => {
    const h = steadyWithOneBurst();
    const at = T0 + 7 * 60 * S;
    const whole = evaluateOver(h, perQueueRate(300 * S), at);
    // 3,000 more over the five minutes: 20 a second instead of 10.
    expect(whole[0]?.value).toBeGreaterThan(19);
    const median = evaluateOver(h, quantileOverSubquery(0.5, perQueueRate(120 * S), 300 * S, 60 * S), at);
    expect(median).toHaveLength(1);
    expect(median[0]?.labels).toEqual({ name: 'q', job: 'ctrl', instance: 'a:1' });
    expect(median[0]?.value).toBeCloseTo(10, 9);
  });

  it("is the middle of the steps' rates, a burst in most of them included", () => {
    const h = steadyWithOneBurst();
    // Four minutes in, the steps (multiples of a minute since the epoch) read rates over the first minutes, some
    // extrapolated over less than their window, the burst at three minutes in some of them.
    const at = T0 + 4 * 60 * S;
    const steps = stepTimes(at, 300 * S, 60 * S).map((t) => evaluateOver(h, perQueueRate(120 * S), t)[0]?.value);
    const rates = steps.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
    expect(rates.length).toBeGreaterThanOrEqual(3);
    const half = Math.floor(rates.length / 2);
    const expected =
      rates.length % 2 === 1 ? (rates[half] as number) : ((rates[half - 1] as number) + (rates[half] as number)) / 2;
    const median = evaluateOver(h, quantileOverSubquery(0.5, perQueueRate(120 * S), 300 * S, 60 * S), at);
    expect(median[0]?.value).toBeCloseTo(expected, 9);
  });
});

describe('inner vectors kept across evaluations', () => {
  it('are kept as values beside one label list shared by the steps with the same label sets', () => {
    const steps = new StepVectors();
    const a = { name: 'a' };
    const b = { name: 'b' };
    let computed = 0;
    const at = (t: number, labels: readonly { name: string }[]) =>
      steps.vectorAt(WHOLE_DEPTH, t, () => {
        computed++;
        return labels.map((l, i) => ({ labels: l, value: t + i }));
      });
    const first = at(5 * S, [a, b]);
    const second = at(10 * S, [a, b]);
    expect([...second.values]).toEqual([10 * S, 10 * S + 1]);
    expect(second.labels).toBe(first.labels);
    expect(at(15 * S, [b]).labels).toEqual([b]);
    // An equal tree reads what was kept; a forgotten time is computed again.
    expect(at(5 * S, [b])).toBe(first);
    expect(computed).toBe(3);
    steps.forgetFrom(10 * S);
    expect(at(10 * S, [b]).labels).toEqual([b]);
    steps.forgetBefore(10 * S);
    expect([...at(5 * S, [a]).values]).toEqual([5 * S]);
    expect(computed).toBe(5);
  });

  it('give what a fresh evaluation gives, also after a sample is written at or before a time already evaluated', async () => {
    const h = new History();
    const scrape = (i: number, depth: number): void => {
      h.append(
        TARGET,
        parseExposition(`${WORKQUEUE.depth}{name="q"} ${depth}\n${WORKQUEUE.adds}{name="q"} ${i}\n`),
        T0 + 15 * S * i,
      );
    };
    for (let i = 0; i <= 30; i++) scrape(i, i * 2);
    const backend = createStoreBackend(historyStore(h));
    const expr = slope(300 * S);
    const at = T0 + 15 * S * 31;
    const before = await backend.evaluate(expr, [at - 15 * S, at]);
    expect(before.map((v) => v.map((s) => s.value))).toEqual(
      [at - 15 * S, at].map((t) => evaluateOver(h, expr, t).map((s) => s.value)),
    );
    // The scrape of step 31 arrives after `at` was evaluated: it changes the step at `at`, and the slope there.
    scrape(31, 1000);
    const after = await backend.evaluate(expr, [at]);
    const fresh = evaluateOver(h, expr, at);
    expect(after[0]?.map((s) => s.value)).toEqual(fresh.map((s) => s.value));
    expect(fresh[0]?.value).not.toBe(before[1]?.[0]?.value);
  });
});
