/**
 * A series' page key held without a string when it can be written from the series' name and labels: every scrape
 * finds the series it continues, and only it, whatever the key's hash, the target's labels (renames to `exported_…`
 * included), the label order and escaping on the page, or the form of the page's keys (ranges of the text, strings,
 * UTF-8 bytes from a worker); `heldSeries` gives each series' key as scraped.
 */
import { describe, expect, it } from 'vitest';
import { pageFromData, pageToData } from '../../src/exposition/parsed-page.js';
import { parseExposition } from '../../src/exposition/parser.js';
import { History, type ScrapeTarget } from '../../src/store/history.js';
import { keptPageKey } from '../../src/store/page-key.js';
import { collidingKeys } from '../support/colliding-keys.js';

const T0 = 1_700_000_000_000;
const S = 1000;
const TARGET: ScrapeTarget = { id: 'ctrl/a:1', labels: { job: 'ctrl', instance: 'a:1' } };
const textPage = (text: string) => parseExposition(text);
/** The page as a worker thread hands it over: its keys as UTF-8 bytes. */
const bytesPage = (text: string) => pageFromData(pageToData(parseExposition(text)).data);

/** Keys as scraped, sorted, of every series of `metric` the target holds, with their samples' values. */
function held(h: History, metric: string): [string, number[]][] {
  return h
    .heldSeries(TARGET.id, metric)
    .map((s): [string, number[]] => [s.key, [...s.v]])
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

/** Two keys of one 32-bit hash, so of one index hash too (the hashes are seeded anew per process). */
const ONE_HASH = collidingKeys();

describe('page keys', () => {
  it('holds no string for a key its name and labels write, target labels left out', () => {
    const labels = { a: '1', instance: 'a:1', job: 'ctrl', name: 'q"u\\o\nte ü' };
    expect(keptPageKey('m{a="1",name="q\\"u\\\\o\\nte ü"}', 'm', labels, { instance: 'a:1', job: 'ctrl' })).toBe(
      undefined,
    );
    expect(keptPageKey('m', 'm', {}, {})).toBe(undefined);
    expect(keptPageKey('m{}', 'm', {}, {})).toBe('m{}');
    // A scraped label renamed for a target label: the labels no longer write the key.
    const renamed = { a: '1', exported_instance: 'x', instance: 'a:1', job: 'ctrl' };
    expect(keptPageKey('m{a="1",instance="x"}', 'm', renamed, TARGET.labels ?? {})).toBe('m{a="1",instance="x"}');
    // Labels a target label names, appended as final: not in the written key.
    expect(keptPageKey('r{b="2",job="ctrl"}', 'r', { b: '2', job: 'ctrl' }, { job: 'ctrl' })).toBe(
      'r{b="2",job="ctrl"}',
    );
  });

  it.each([
    ['keys as ranges of the text', textPage],
    ['keys as UTF-8 bytes', bytesPage],
  ])('tells apart two series whose keys hash alike, found again in another order (%s)', (_form, page) => {
    const [a, b] = ONE_HASH;
    const h = new History();
    expect(h.append(TARGET, page(`${a} 1\n${b} 2\n`), T0).newSeries).toBe(2);
    // Swapped: the previous scrape's series at each position has the same hash and another key.
    expect(h.append(TARGET, page(`${b} 20\n${a} 10\n`), T0 + 15 * S).newSeries).toBe(0);
    expect(h.append(TARGET, page(`${a} 100\n`), T0 + 30 * S).newSeries).toBe(0);
    const values = new Map(h.heldSeries(TARGET.id, 'm').map((s) => [s.key, [...s.v]]));
    expect(values).toEqual(
      new Map([
        [a, [1, 10, 100]],
        [b, [2, 20]],
      ]),
    );
    expect(h.stats().series).toBe(2);
  });

  it.each([
    ['keys as ranges of the text', textPage],
    ['keys as UTF-8 bytes', bytesPage],
  ])('finds again series with target labels, renamed labels and escaped values (%s)', (_form, page) => {
    const h = new History();
    const scrape = (i: number, swapped: boolean) =>
      [
        // Non-canonical order: the parser writes the key anew (a string, not a range of the text).
        swapped ? `m{name="q\\"ü\\\\",a="1"} ${i}` : `m{a="1",name="q\\"ü\\\\"} ${i}`,
        // Renamed to exported_instance; its final labels are those of the next series too.
        `m{instance="x",a="1"} ${10 + i}`,
        `m{exported_instance="x",a="1"} ${20 + i}`,
        `m{job="scraped",exported_job="taken"} ${30 + i}`,
        `m ${40 + i}`,
        '',
      ].join('\n');
    expect(h.append(TARGET, page(scrape(0, false)), T0).newSeries).toBe(5);
    expect(h.append(TARGET, page(scrape(1, true)), T0 + 15 * S).newSeries).toBe(0);
    expect(h.append(TARGET, page(scrape(2, false)), T0 + 30 * S).newSeries).toBe(0);
    expect(held(h, 'm')).toEqual([
      ['m', [40, 41, 42]],
      ['m{a="1",exported_instance="x"}', [20, 21, 22]],
      ['m{a="1",instance="x"}', [10, 11, 12]],
      ['m{a="1",name="q\\"ü\\\\"}', [0, 1, 2]],
      ['m{exported_job="taken",job="scraped"}', [30, 31, 32]],
    ]);
    const renamed = h.select({ metric: 'm' }).filter((s) => s.labels.exported_instance === 'x');
    expect(renamed.map((s) => ({ ...s.labels }))).toEqual([
      { a: '1', exported_instance: 'x', instance: 'a:1', job: 'ctrl' },
      { a: '1', exported_instance: 'x', instance: 'a:1', job: 'ctrl' },
    ]);
  });

  it('continues appended and restored series under the keys they were given', () => {
    const h = new History();
    h.appendSamples(TARGET, 'r', { b: '2', job: 'ctrl' }, [T0], [1]);
    h.appendSamples(TARGET, 'r', { b: '2', job: 'ctrl' }, [T0 + S], [2]);
    h.appendSamples(TARGET, 'r', { b: '2' }, [T0], [3]);
    expect(held(h, 'r')).toEqual([
      ['r{b="2",job="ctrl"}', [1, 2]],
      ['r{b="2"}', [3]],
    ]);
    // A scrape continues the series of its key: the one whose key has no target label.
    expect(h.append(TARGET, textPage('r{b="2"} 4\n'), T0 + 15 * S).newSeries).toBe(0);
    const restored = new History();
    for (const s of h.heldSeries(TARGET.id, 'r')) restored.restoreSeries(TARGET, s, s.t, s.v);
    expect(restored.append(TARGET, textPage('r{b="2"} 5\n'), T0 + 30 * S).newSeries).toBe(0);
    expect(held(restored, 'r')).toEqual([
      ['r{b="2",job="ctrl"}', [1, 2]],
      ['r{b="2"}', [3, 4, 5]],
    ]);
  });
});
