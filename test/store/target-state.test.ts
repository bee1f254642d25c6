/**
 * A target's index of live series: `add` and `remove` keep the index by key hash, the name lists and the count in
 * step; `remove` answers false for a series not live; `liveSeries()` visits each live series once, colliding hashes
 * included, and the series being visited may be removed meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { SeriesBuffer } from '../../src/store/series-buffer.js';
import { type SeriesRecord, TargetState } from '../../src/store/target-state.js';
import { WordArena } from '../../src/store/word-arena.js';

const space = { maxSamples: 121, retentionMs: 30 * 60_000, arena: new WordArena() };

function target(): TargetState {
  return new TargetState('t', {}, new SeriesBuffer(space));
}

let serial = 0;
/** A series of `st` named `name` whose key hashes to `hash` (several may share one). */
function series(st: TargetState, name: string, hash: number): SeriesRecord {
  return {
    target: st,
    name,
    labels: {},
    keptPageKey: undefined,
    hash,
    buf: new SeriesBuffer(space),
    withName: undefined,
    seenEpoch: -1,
    explicitTs: false,
    dead: false,
    queueKey: undefined,
    serial: serial++,
  };
}

const names = (recs: Iterable<SeriesRecord>) => [...recs].map((r) => r.name).sort();

describe('TargetState', () => {
  it('adds and removes series, colliding hashes included; a series not live is not removed', () => {
    const st = target();
    const [a, b, c, d] = [series(st, 'a', 1), series(st, 'b', 2), series(st, 'c', 1), series(st, 'd', 1)];
    for (const rec of [a, b, c, d]) st.add(rec);
    expect([st.seriesCount, names(st.liveSeries())]).toEqual([4, ['a', 'b', 'c', 'd']]);
    expect(st.byHash.get(1)).toEqual([a, c, d]);
    expect(st.remove(c)).toBe(true);
    expect(st.remove(c)).toBe(false);
    expect(st.remove(series(st, 'e', 1))).toBe(false);
    expect(st.remove(series(st, 'f', 7))).toBe(false);
    expect([st.seriesCount, names(st.liveSeries()), c.dead]).toEqual([3, ['a', 'b', 'd'], true]);
    expect(st.byHash.get(1)).toEqual([a, d]);
    expect([st.remove(a), st.remove(d), st.remove(b)]).toEqual([true, true, true]);
    expect([st.seriesCount, names(st.liveSeries()), st.byHash.size, st.byName.size]).toEqual([0, [], 0, 0]);
  });

  it('visits every live series once while the one visited is removed', () => {
    const st = target();
    const recs = Array.from({ length: 40 }, (_, i) => series(st, `s${i}`, i % 7));
    for (const rec of recs) st.add(rec);
    const visited: string[] = [];
    for (const rec of st.liveSeries()) {
      visited.push(rec.name);
      if (Number(rec.name.slice(1)) % 3 === 0) expect(st.remove(rec)).toBe(true);
    }
    expect(visited.sort()).toEqual(names(recs));
    expect(names(st.liveSeries())).toEqual(names(recs.filter((_, i) => i % 3 !== 0)));
    expect(st.seriesCount).toBe(26);
  });

  it('does not visit a series removed before its turn', () => {
    const st = target();
    const [a, b, c] = [series(st, 'a', 1), series(st, 'b', 1), series(st, 'c', 2)];
    for (const rec of [a, b, c]) st.add(rec);
    const visited: string[] = [];
    for (const rec of st.liveSeries()) {
      visited.push(rec.name);
      if (rec === a) {
        st.remove(b);
        st.remove(c);
      }
    }
    expect(visited).toEqual(['a']);
  });
});
