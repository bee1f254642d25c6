/**
 * The history's change watermarks: each reader learns the earliest sample time written since it last asked,
 * whatever wrote it (a scrape, samples with their own timestamps, stale markers, recorded samples), and that
 * everything may have changed when a target's series are removed.
 */
import { describe, expect, it } from 'vitest';
import { parseExposition } from '../../src/exposition/parser.js';
import { History } from '../../src/store/history.js';

const target = { id: 'a', labels: { job: 'j', instance: 'a:1' } };

describe('change watermarks', () => {
  it('report the earliest time written since the last look, per reader', () => {
    const history = new History();
    const reader = history.changes();
    expect(reader.takeEarliest()).toBe(Number.POSITIVE_INFINITY);
    history.append(target, parseExposition('x 1\ny 2\n'), 10_000);
    history.append(target, parseExposition('x 2\ny 3\n'), 25_000);
    expect(reader.takeEarliest()).toBe(10_000);
    expect(reader.takeEarliest()).toBe(Number.POSITIVE_INFINITY);
    const second = history.changes();
    // A sample with its own, older timestamp; `y` missing from the scrape gets a stale marker at the scrape's time.
    history.append(target, parseExposition('x 3 12000\n'), 40_000);
    expect(reader.takeEarliest()).toBe(12_000);
    expect(second.takeEarliest()).toBe(12_000);
    history.append(target, parseExposition('x 4\n'), 50_000);
    expect(reader.takeEarliest()).toBe(50_000);
    history.markStale('a', 55_000);
    expect(reader.takeEarliest()).toBe(55_000);
    history.appendSamples({ id: 'r' }, 'z', { job: 'r' }, [5_000, 6_000], [1, 2]);
    expect(reader.takeEarliest()).toBe(5_000);
    second.close();
    history.removeTarget('r');
    expect(reader.takeEarliest()).toBe(Number.NEGATIVE_INFINITY);
  });

  it('do not move for a scrape older than the previous one, which is rejected whole', () => {
    const history = new History();
    history.append(target, parseExposition('x 1\n'), 20_000);
    const reader = history.changes();
    history.append(target, parseExposition('x 2\n'), 10_000);
    expect(reader.takeEarliest()).toBe(Number.POSITIVE_INFINITY);
  });
});
