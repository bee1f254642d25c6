/**
 * The packed series buffer against a plain model (arrays of times and values with the same limits): after every
 * append, expiry and stale marker, every sample reads back bit for bit (NaN, ±Inf, -0, fractions, counters past
 * 2^32, jittered and irregular times, gaps), through `time`/`value`, `read`, `views` and the bounds, whatever the
 * block boundaries, widths and compactions in between. And what it saves: regular scrapes of integer series take
 * a few bits per sample.
 */
import { describe, expect, it } from 'vitest';
import { AppendOutcome, type BufferLimits, SeriesBuffer } from '../../src/store/series-buffer.js';
import { WordArena } from '../../src/store/word-arena.js';
import { random } from '../support/recordings.js';

class Model {
  t: number[] = [];
  v: number[] = [];
  constructor(readonly limits: BufferLimits) {}
  append(time: number, value: number): AppendOutcome {
    const n = this.t.length;
    if (n > 0) {
      const last = this.t[n - 1] as number;
      if (time < last) return AppendOutcome.OutOfOrder;
      if (time === last) {
        const lv = this.v[n - 1] as number;
        return lv === value || (Number.isNaN(lv) && Number.isNaN(value)) ? AppendOutcome.Same : AppendOutcome.Duplicate;
      }
    }
    this.expire(time);
    if (this.t.length >= this.limits.maxSamples) {
      this.t.shift();
      this.v.shift();
    }
    this.t.push(time);
    this.v.push(value);
    return AppendOutcome.Appended;
  }
  expire(now: number): void {
    const cutoff = now - this.limits.retentionMs;
    while (this.t.length > 0 && (this.t[0] as number) < cutoff) {
      this.t.shift();
      this.v.shift();
    }
  }
}

/** A value drawn from what series hold: counters, gauges, fractions, specials. */
function valueDrawer(rnd: () => number): (previous: number) => number {
  return (previous) => {
    const r = rnd();
    if (r < 0.3) return previous;
    if (r < 0.55)
      return Number.isFinite(previous) && Number.isInteger(previous) ? previous + Math.floor(rnd() * 40) : 7;
    if (r < 0.65) return Math.floor(rnd() * 5);
    if (r < 0.75) return rnd() * 1000;
    if (r < 0.78) return Number.NaN;
    if (r < 0.8) return rnd() < 0.5 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
    if (r < 0.82) return -0;
    if (r < 0.86) return 2 ** 33 + Math.floor(rnd() * 2 ** 34);
    if (r < 0.9) return -Math.floor(rnd() * 1e6);
    if (r < 0.92) return Number.MAX_SAFE_INTEGER - Math.floor(rnd() * 10);
    return Math.floor(rnd() * 2 ** 40);
  };
}

/** A time step drawn from what scrapes do: regular, jittered, gaps, bursts, fractions of a millisecond. */
function stepDrawer(rnd: () => number): () => number {
  return () => {
    const r = rnd();
    if (r < 0.5) return 15_000;
    if (r < 0.8) return 15_000 + Math.floor(rnd() * 2_000) - 1_000;
    if (r < 0.88) return 15_000 * (2 + Math.floor(rnd() * 10));
    if (r < 0.94) return 1 + Math.floor(rnd() * 5);
    if (r < 0.97) return 0.5 + rnd();
    return 2 ** 31 + Math.floor(rnd() * 1e6);
  };
}

function sameNumber(a: number, b: number): boolean {
  return Object.is(a, b);
}

function expectSame(buf: SeriesBuffer, model: Model, where: string): void {
  expect(buf.length, `${where}: length`).toBe(model.t.length);
  const n = model.t.length;
  for (let k = 0; k < n; k++) {
    const i = buf.start + k;
    if (!sameNumber(buf.time(i), model.t[k] as number) || !sameNumber(buf.value(i), model.v[k] as number)) {
      expect([buf.time(i), buf.value(i)], `${where}: sample ${k} of ${n}`).toEqual([model.t[k], model.v[k]]);
    }
  }
  const { t, v } = buf.views(buf.start, buf.end);
  for (let k = 0; k < n; k++) {
    if (!sameNumber(t[k] as number, model.t[k] as number) || !sameNumber(v[k] as number, model.v[k] as number)) {
      expect([t[k], v[k]], `${where}: views ${k}`).toEqual([model.t[k], model.v[k]]);
    }
  }
  if (n > 2) {
    const first = model.t[0] as number;
    const last = model.t[n - 1] as number;
    const mid = model.t[Math.floor(n / 2)] as number;
    for (const probe of [first - 1, first, first + 0.5, mid - 0.5, mid, mid + 0.5, last - 0.5, last, last + 1]) {
      const lower = model.t.findIndex((x) => x >= probe);
      const upper = model.t.findIndex((x) => x > probe);
      expect(buf.lowerBound(probe) - buf.start, `${where}: lowerBound(${probe})`).toBe(lower < 0 ? n : lower);
      expect(buf.upperBound(probe) - buf.start, `${where}: upperBound(${probe})`).toBe(upper < 0 ? n : upper);
    }
    const from = 1 + Math.floor(n / 3);
    const part = { t: new Float64Array(n), v: new Float64Array(n) };
    buf.read(buf.start + from, buf.end, part.t, part.v, 1);
    for (let k = from; k < n; k++) {
      expect(sameNumber(part.t[k - from + 1] as number, model.t[k] as number), `${where}: read ${k}`).toBe(true);
      expect(sameNumber(part.v[k - from + 1] as number, model.v[k] as number), `${where}: read ${k}`).toBe(true);
    }
  }
}

describe('the packed series buffer reads back what was appended', () => {
  const limitsOf: Array<[string, BufferLimits]> = [
    ['121 samples, 30 minutes', { maxSamples: 121, retentionMs: 30 * 60_000 }],
    ['unbounded', { maxSamples: Number.POSITIVE_INFINITY, retentionMs: Number.POSITIVE_INFINITY }],
    ['5 samples', { maxSamples: 5, retentionMs: Number.POSITIVE_INFINITY }],
    ['one sample', { maxSamples: 1, retentionMs: Number.POSITIVE_INFINITY }],
    ['3 minutes', { maxSamples: Number.POSITIVE_INFINITY, retentionMs: 3 * 60_000 }],
  ];

  /** Random appends (and now and then an expiry) to a buffer and to the model, compared every `every` appends. */
  function againstModel(limits: BufferLimits, seed: number, minAppends: number, every: number): void {
    const rnd = random(seed);
    const nextValue = valueDrawer(rnd);
    const nextStep = stepDrawer(rnd);
    const buf = new SeriesBuffer({ ...limits, arena: new WordArena() });
    const model = new Model(limits);
    let time = 1_700_000_000_000 + Math.floor(rnd() * 1e6);
    let value = 0;
    const appends = minAppends + Math.floor(rnd() * 250);
    for (let a = 0; a < appends; a++) {
      const r = rnd();
      if (r < 0.03) time -= 1 + Math.floor(rnd() * 20_000);
      else if (r >= 0.06) time += nextStep();
      if (r >= 0.03 && r < 0.06 && rnd() < 0.5) value = nextValue(value);
      else if (r >= 0.06) value = nextValue(value);
      expect(buf.append(time, value), `seed ${seed} append ${a}`).toBe(model.append(time, value));
      if (rnd() < 0.02) {
        const now = time + Math.floor(rnd() * 10 * 60_000);
        buf.expire(now);
        model.expire(now);
      }
      if (a % every === 0 || a === appends - 1) expectSame(buf, model, `seed ${seed} after ${a}`);
      time = Math.max(time, model.t.at(-1) ?? time);
    }
  }

  it.each(limitsOf)('%s, over many seeds', (_, limits) => {
    for (let seed = 1; seed <= 20; seed++) againstModel(limits, seed, 150, 7);
  });

  it.each([
    ['unbounded', { maxSamples: Number.POSITIVE_INFINITY, retentionMs: Number.POSITIVE_INFINITY }],
    // 250 to 313 samples from the first block's first: 4 or 5 blocks, indexed and not in turn.
    ['250 samples', { maxSamples: 250, retentionMs: Number.POSITIVE_INFINITY }],
    // 7 blocks and more: the index loses its first entries as blocks expire.
    ['400 samples', { maxSamples: 400, retentionMs: Number.POSITIVE_INFINITY }],
  ] as const)('%s, over many blocks (an index of block offsets, made and dropped)', (_, limits) => {
    for (let seed = 1; seed <= 2; seed++) againstModel(limits, seed, 800, 37);
  });

  it('an empty buffer after expiry starts afresh', () => {
    const limits = { maxSamples: 121, retentionMs: 60_000 };
    const buf = new SeriesBuffer({ ...limits, arena: new WordArena() });
    for (let i = 0; i < 100; i++) buf.append(i * 15_000, i);
    buf.expire(10 * 60 * 60_000);
    expect(buf.isEmpty()).toBe(true);
    expect(buf.append(20 * 60 * 60_000, 3.5)).toBe(AppendOutcome.Appended);
    expect([buf.length, buf.time(buf.start), buf.value(buf.start)]).toEqual([1, 20 * 60 * 60_000, 3.5]);
  });
});

describe('what the packing saves', () => {
  /** Bytes per sample held once 30 minutes at 15 s are in. */
  function bytesPerSample(jitterMs: number, nextValue: (i: number) => number): number {
    const buf = new SeriesBuffer({ maxSamples: 121, retentionMs: 30 * 60_000, arena: new WordArena() });
    const rnd = random(7);
    for (let i = 0; i < 121; i++)
      buf.append(1_700_000_000_000 + i * 15_000 + Math.floor(rnd() * jitterMs), nextValue(i));
    return buf.bytes() / buf.length;
  }

  it('a counter that does not move, scraped on time: under a byte per sample', () => {
    expect(bytesPerSample(0, () => 42)).toBeLessThan(1);
  });

  it('a busy counter with scrape jitter of 20 ms: about two bytes per sample, against 16 unpacked', () => {
    expect(bytesPerSample(20, (i) => 1_000_000 + i * 137)).toBeLessThan(3);
  });

  it('a gauge of fractions stays exact at about the unpacked size', () => {
    const perSample = bytesPerSample(20, (i) => i / 3);
    expect(perSample).toBeGreaterThan(8);
    expect(perSample).toBeLessThan(12);
  });
});
