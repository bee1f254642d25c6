/**
 * Seeded randomness for the simulator: every random choice of a run comes from a `Random` derived
 * from the run's seed and a stable label ("deployment/events", "deployment/sync"), so one stream's
 * use never shifts another's and the same seed gives the same run.
 *
 * Generator: xoshiro128** (32-bit state words, `Math.imul`), seeded through splitmix32.
 */

/** FNV-1a over the label's UTF-16 code units. */
function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | undefined;

  /** A stream for `seed` (any finite number; its integer part and fraction both count) and `label`. */
  constructor(seed: number, label = '') {
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 4294967296) >>> 0;
    const state = { s: (lo ^ Math.imul(hi, 0x27d4eb2d) ^ hashLabel(label)) | 0 };
    this.a = splitmix32(state);
    this.b = splitmix32(state);
    this.c = splitmix32(state);
    this.d = splitmix32(state);
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** A 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9);
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result >>> 0;
  }

  /** Uniform in [0, 1), 53 bits. */
  next(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform in [min, max). */
  uniform(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Exponentially distributed with the given mean. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** Standard normal (Marsaglia polar method; the second value is kept for the next call). */
  normal(): number {
    const spare = this.spareNormal;
    if (spare !== undefined) {
      this.spareNormal = undefined;
      return spare;
    }
    let u: number;
    let v: number;
    let s: number;
    do {
      u = this.next() * 2 - 1;
      v = this.next() * 2 - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const f = Math.sqrt((-2 * Math.log(s)) / s);
    this.spareNormal = v * f;
    return u * f;
  }

  /** Log-normal with the given median and shape `sigma` (the standard deviation of its logarithm). */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** A new independent stream, derived from this one's seed material and `label`. */
  fork(label: string): Random {
    return new Random(this.nextUint32() * 4294967296 + this.nextUint32(), label);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
