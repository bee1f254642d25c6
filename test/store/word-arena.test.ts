/**
 * The word arena the sample buffers share: range sizes, disjoint ranges, freed ranges reused and merged with their
 * free neighbours, slabs opened when full and dropped when wholly free, ranges of their own slab; and buffers that
 * grow, expire and are released in one arena read back what each would alone, and give their words back.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../src/simulate/random.js';
import { SeriesBuffer } from '../../src/store/series-buffer.js';
import { MIN_RANGE_WORDS, rangeWords, SLAB_WORDS, WordArena } from '../../src/store/word-arena.js';

const SLAB_BYTES = SLAB_WORDS * 4;

/** Writes `tag, tag + 1, …` over a range. */
function fill(arena: WordArena, range: number, words: number, tag: number): void {
  const slab = arena.slabOf(range);
  const at = arena.offsetOf(range);
  for (let k = 0; k < words; k++) slab[at + k] = tag + k;
}

/** Whether a range still holds what `fill` wrote. */
function holds(arena: WordArena, range: number, words: number, tag: number): boolean {
  const slab = arena.slabOf(range);
  const at = arena.offsetOf(range);
  for (let k = 0; k < words; k++) if (slab[at + k] !== tag + k) return false;
  return true;
}

describe('range sizes', () => {
  it('go up by quarters of a power of two from the smallest', () => {
    expect([1, 16, 17, 20, 21, 33, 40, 41, 63, 64, 65, 100, 1000].map(rangeWords)).toEqual([
      16, 16, 20, 20, 24, 40, 40, 48, 64, 64, 80, 112, 1024,
    ]);
  });

  it('hold what was asked with at most a quarter to spare', () => {
    const wrong: number[] = [];
    for (let words = MIN_RANGE_WORDS; words < 70_000; words += 7) {
      const size = rangeWords(words);
      if (size < words || size > words * 1.25 || rangeWords(size) !== size) wrong.push(words);
    }
    expect(wrong).toEqual([]);
  });
});

describe('the word arena', () => {
  it('hands out disjoint ranges of the size asked, out of one slab', () => {
    const arena = new WordArena();
    const sizes = [16, 17, 100, 5, 1000, 33, 64];
    const ranges = sizes.map((words, i) => {
      const range = arena.allocate(words);
      fill(arena, range, rangeWords(words), i * 10_000);
      return range;
    });
    sizes.forEach((words, i) => {
      expect(holds(arena, ranges[i] as number, rangeWords(words), i * 10_000)).toBe(true);
    });
    expect(new Set(ranges.map((r) => arena.slabOf(r))).size).toBe(1);
    expect(arena.bytes()).toBe(SLAB_BYTES);
    expect(arena.freeBytes()).toBe(SLAB_BYTES - sizes.reduce((sum, words) => sum + rangeWords(words) * 4, 0));
  });

  it('hands a freed range out again for its size', () => {
    const arena = new WordArena();
    const a = arena.allocate(40);
    const b = arena.allocate(40);
    arena.allocate(16);
    arena.free(a, 40);
    expect(arena.allocate(48)).not.toBe(a);
    expect(arena.allocate(37)).toBe(a);
    arena.free(b, 40);
    expect(arena.allocate(40)).toBe(b);
  });

  it('merges a freed range with the free words beside it, to serve larger ranges', () => {
    const arena = new WordArena();
    const small = Array.from({ length: 100 }, () => arena.allocate(80));
    arena.allocate(16);
    for (const range of small) arena.free(range, 80);
    // 8,000 words freed in 80-word ranges serve 71 ranges of 112 words: no new slab, nothing cut from the rest.
    const freeBefore = arena.freeBytes();
    const larger = Array.from({ length: 71 }, () => arena.allocate(112));
    expect(larger.every((range) => range >= (small[0] as number) && range < (small[0] as number) + 8_000)).toBe(true);
    expect(arena.freeBytes()).toBe(freeBefore - 71 * 112 * 4);
    expect(arena.bytes()).toBe(SLAB_BYTES);
  });

  it('opens a slab when no free run holds a range, and drops a slab left wholly free', () => {
    const arena = new WordArena();
    const largest = SLAB_WORDS / 8;
    const ranges = Array.from({ length: 8 }, () => arena.allocate(largest));
    expect([arena.bytes(), arena.freeBytes()]).toEqual([SLAB_BYTES, 0]);
    const next = arena.allocate(16);
    expect(arena.slabOf(next) === arena.slabOf(ranges[0] as number)).toBe(false);
    expect(arena.bytes()).toBe(2 * SLAB_BYTES);
    arena.free(next, 16);
    expect(arena.bytes()).toBe(SLAB_BYTES);
    for (const range of ranges.reverse()) arena.free(range, largest);
    expect([arena.bytes(), arena.freeBytes()]).toEqual([0, 0]);
  });

  it('gives a large range a slab of its own, dropped when freed', () => {
    const arena = new WordArena();
    const small = arena.allocate(16);
    const words = SLAB_WORDS;
    const large = arena.allocate(words);
    expect(arena.slabOf(large) === arena.slabOf(small)).toBe(false);
    expect(arena.slabOf(large).length).toBe(rangeWords(words));
    fill(arena, large, words, 1);
    expect(arena.bytes()).toBe(SLAB_BYTES + rangeWords(words) * 4);
    arena.free(large, rangeWords(words));
    expect(arena.bytes()).toBe(SLAB_BYTES);
    const again = arena.allocate(3 * SLAB_WORDS);
    expect(arena.slabOf(again).length).toBe(3 * SLAB_WORDS);
    expect(arena.bytes()).toBe(4 * SLAB_BYTES);
  });

  it('ranges allocated and freed at random stay disjoint, reuse what was freed and leave nothing at the end', () => {
    const arena = new WordArena();
    const random = new Random(1);
    const rnd = () => random.next();
    const held = new Map<number, { words: number; tag: number }>();
    let peakHeldWords = 0;
    let heldWords = 0;
    for (let step = 0; step < 20_000; step++) {
      if (held.size > 0 && rnd() < 0.45) {
        const [range, { words, tag }] = [...held.entries()][Math.floor(rnd() * held.size)] as [
          number,
          { words: number; tag: number },
        ];
        expect(holds(arena, range, words, tag)).toBe(true);
        arena.free(range, words);
        held.delete(range);
        heldWords -= words;
      } else {
        const words = rangeWords(1 + Math.floor(rnd() * (rnd() < 0.01 ? 20_000 : 600)));
        const range = arena.allocate(words);
        expect(held.has(range)).toBe(false);
        fill(arena, range, words, step * 1000);
        held.set(range, { words, tag: step * 1000 });
        heldWords += words;
        peakHeldWords = Math.max(peakHeldWords, heldWords);
      }
      expect(arena.bytes() - arena.freeBytes()).toBe(heldWords * 4);
    }
    for (const [range, { words, tag }] of held) expect(holds(arena, range, words, tag)).toBe(true);
    expect(arena.bytes()).toBeLessThanOrEqual(2 * peakHeldWords * 4);
    for (const [range, { words }] of held) arena.free(range, words);
    expect([arena.bytes(), arena.freeBytes()]).toEqual([0, 0]);
  });
});

describe('sample buffers in one arena', () => {
  const limits = { maxSamples: 121, retentionMs: 30 * 60_000 };
  const T0 = 1_700_000_000_000;

  /** Fills `count` buffers with `samples` samples each, of values that take raw words (so buffers grow). */
  function filled(arena: WordArena, count: number, samples: number): SeriesBuffer[] {
    const buffers = Array.from({ length: count }, () => new SeriesBuffer({ ...limits, arena }));
    for (let i = 0; i < samples; i++) for (const [b, buf] of buffers.entries()) buf.append(T0 + i * 15_000, b + i / 3);
    return buffers;
  }

  it('released buffers give their words back: the next ones take no new slab', () => {
    const arena = new WordArena();
    const kept = filled(arena, 1, 121);
    const first = filled(arena, 2_000, 121);
    const bytes = arena.bytes();
    expect(bytes).toBeGreaterThan(SLAB_BYTES);
    for (const buf of first) buf.release();
    // What stays handed out is the kept buffer's range: its bytes (two blocks, no index of their offsets).
    expect(arena.bytes() - arena.freeBytes()).toBe((kept[0] as SeriesBuffer).bytes());
    const second = filled(arena, 2_000, 121);
    expect(arena.bytes()).toBe(bytes);
    for (const [b, buf] of second.entries()) {
      expect(buf.length).toBe(121);
      expect([buf.time(buf.start), buf.value(buf.end - 1)]).toEqual([T0, b + 120 / 3]);
    }
  });

  it('a released buffer is empty, and takes appends again', () => {
    const arena = new WordArena();
    const [buf] = filled(arena, 1, 50) as [SeriesBuffer];
    buf.markStale(T0 + 50 * 15_000);
    buf.release();
    expect([buf.isEmpty(), buf.length, buf.isStale(), buf.newest(), buf.bytes()]).toEqual([
      true,
      0,
      false,
      Number.NEGATIVE_INFINITY,
      0,
    ]);
    buf.release();
    buf.append(T0, 2.5);
    buf.append(T0 + 15_000, 3);
    expect(buf.views(buf.start, buf.end)).toEqual({
      t: new Float64Array([T0, T0 + 15_000]),
      v: new Float64Array([2.5, 3]),
    });
  });

  it('buffers appended in turn, expiring and released at random, read back what each alone would hold', () => {
    const arena = new WordArena();
    const random = new Random(7);
    const rnd = () => random.next();
    const shapes = [
      (i: number) => 42 + 0 * i,
      (i: number) => 1_000_000 + i * 137,
      (i: number) => i / 3,
      (i: number) => (i % 17 === 0 ? Number.NaN : 2 ** 40 + i),
    ];
    const count = 300;
    const shared = Array.from({ length: count }, () => new SeriesBuffer({ ...limits, arena }));
    const alone = Array.from({ length: count }, () => new SeriesBuffer({ ...limits, arena: new WordArena() }));
    const next = new Array<number>(count).fill(0);
    for (let step = 0; step < 60_000; step++) {
      const s = Math.floor(rnd() * count);
      const shape = shapes[s % shapes.length] as (i: number) => number;
      const i = next[s] as number;
      next[s] = i + 1;
      const time = T0 + i * 15_000 + Math.floor(rnd() * 30);
      const a = shared[s] as SeriesBuffer;
      const b = alone[s] as SeriesBuffer;
      const r = rnd();
      if (r < 0.002) {
        a.release();
        b.release();
        next[s] = 0;
        continue;
      }
      if (r < 0.01) {
        a.expire(time + 20 * 60_000);
        b.expire(time + 20 * 60_000);
      }
      expect(a.append(time, shape(i))).toBe(b.append(time, shape(i)));
    }
    for (let s = 0; s < count; s++) {
      const a = shared[s] as SeriesBuffer;
      const b = alone[s] as SeriesBuffer;
      expect(a.length).toBe(b.length);
      expect(a.views(a.start, a.end)).toEqual(b.views(b.start, b.end));
    }
    let held = 0;
    for (const buf of shared) held += buf.bytes() - (buf.staleAt?.length ?? 0) * 8;
    expect(arena.bytes() - arena.freeBytes()).toBeLessThanOrEqual(held);
    for (const buf of shared) buf.release();
    expect(arena.bytes()).toBe(0);
  });
});
