/**
 * The samples of one series: a bounded, time-ordered buffer in typed arrays.
 *
 * Invariants: live samples are `t[start..end)`, `v[start..end)`, strictly increasing in time, and
 * contiguous (the buffer slides: when it is full, the live part is moved to the front or the
 * arrays grow), so a time window is a pair of `subarray` views and costs no copy. Stale markers
 * (Prometheus's "this series vanished" points) are kept apart in `staleAt`, ascending, never at
 * the time of a sample.
 *
 * Limits: at most `maxSamples` samples (the oldest is dropped), and samples older than the
 * newest point minus `retentionMs` are dropped at each append.
 */

export const AppendOutcome = {
  Appended: 0,
  /** Same timestamp and value as the newest sample: ignored, as Prometheus does. */
  Same: 1,
  /** Same timestamp, different value. */
  Duplicate: 2,
  /** Older than the newest sample or stale marker. */
  OutOfOrder: 3,
} as const;
export type AppendOutcome = (typeof AppendOutcome)[keyof typeof AppendOutcome];

const INITIAL_CAPACITY = 8;

export class SeriesBuffer {
  t: Float64Array;
  v: Float64Array;
  start = 0;
  end = 0;
  staleAt: number[] | undefined;
  private readonly maxSamples: number;
  private readonly retentionMs: number;

  constructor(maxSamples: number, retentionMs: number, initialCapacity = INITIAL_CAPACITY) {
    this.maxSamples = maxSamples;
    this.retentionMs = retentionMs;
    const cap = Math.max(2, Math.min(initialCapacity, maxSamples + 1));
    this.t = new Float64Array(cap);
    this.v = new Float64Array(cap);
  }

  get length(): number {
    return this.end - this.start;
  }

  /** Time of the newest sample or stale marker, or -Infinity. */
  newest(): number {
    const s = this.staleAt;
    const lastStale = s === undefined || s.length === 0 ? Number.NEGATIVE_INFINITY : (s[s.length - 1] as number);
    const lastSample = this.end > this.start ? (this.t[this.end - 1] as number) : Number.NEGATIVE_INFINITY;
    return Math.max(lastStale, lastSample);
  }

  /** True when the newest point is a stale marker. */
  isStale(): boolean {
    const s = this.staleAt;
    if (s === undefined || s.length === 0) return false;
    return this.end === this.start || (s[s.length - 1] as number) > (this.t[this.end - 1] as number);
  }

  append(time: number, value: number): AppendOutcome {
    const end = this.end;
    if (end > this.start) {
      const last = this.t[end - 1] as number;
      if (time <= last) {
        if (time < last) return AppendOutcome.OutOfOrder;
        const lv = this.v[end - 1] as number;
        return lv === value || (Number.isNaN(lv) && Number.isNaN(value)) ? AppendOutcome.Same : AppendOutcome.Duplicate;
      }
    }
    const s = this.staleAt;
    if (s !== undefined && s.length > 0 && time <= (s[s.length - 1] as number)) return AppendOutcome.OutOfOrder;
    this.expire(time);
    if (this.end - this.start >= this.maxSamples) this.start++;
    if (this.end === this.t.length) this.makeRoom();
    this.t[this.end] = time;
    this.v[this.end] = value;
    this.end++;
    return AppendOutcome.Appended;
  }

  /** Adds a stale marker at `time` unless the series is already stale or has a newer point. */
  markStale(time: number): boolean {
    if (this.isStale() || time <= this.newest() || this.end === this.start) return false;
    this.expire(time);
    this.staleAt ??= [];
    this.staleAt.push(time);
    return true;
  }

  /** Drops samples and stale markers older than `now - retentionMs`. */
  expire(now: number): void {
    const cutoff = now - this.retentionMs;
    if (!(cutoff > Number.NEGATIVE_INFINITY)) return;
    let start = this.start;
    while (start < this.end && (this.t[start] as number) < cutoff) start++;
    this.start = start;
    if (start === this.end) {
      this.start = 0;
      this.end = 0;
    }
    const s = this.staleAt;
    if (s !== undefined && s.length > 0 && (s[0] as number) < cutoff) {
      let k = 0;
      while (k < s.length && (s[k] as number) < cutoff) k++;
      s.splice(0, k);
    }
  }

  /** True when no sample is left (a stale marker alone says nothing a lookup could return). */
  isEmpty(): boolean {
    return this.end === this.start;
  }

  private makeRoom(): void {
    const live = this.end - this.start;
    const cap = this.t.length;
    if (this.start > 0 && live <= cap * 0.75) {
      this.t.copyWithin(0, this.start, this.end);
      this.v.copyWithin(0, this.start, this.end);
    } else {
      const limit = this.maxSamples + Math.max(8, Math.ceil(this.maxSamples / 4));
      const next = Math.max(live + 1, Math.min(cap * 2, limit));
      const t = new Float64Array(next);
      const v = new Float64Array(next);
      t.set(this.t.subarray(this.start, this.end));
      v.set(this.v.subarray(this.start, this.end));
      this.t = t;
      this.v = v;
    }
    this.start = 0;
    this.end = live;
  }

  /** Index of the first sample with time >= `time`. */
  lowerBound(time: number): number {
    let lo = this.start;
    let hi = this.end;
    const t = this.t;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((t[mid] as number) < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index after the last sample with time <= `time`. */
  upperBound(time: number): number {
    let lo = this.start;
    let hi = this.end;
    const t = this.t;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((t[mid] as number) <= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Newest stale marker at or before `time`, or -Infinity. */
  staleAtOrBefore(time: number): number {
    const s = this.staleAt;
    if (s === undefined) return Number.NEGATIVE_INFINITY;
    for (let k = s.length - 1; k >= 0; k--) {
      const x = s[k] as number;
      if (x <= time) return x;
    }
    return Number.NEGATIVE_INFINITY;
  }

  /** Bytes held by the arrays. */
  bytes(): number {
    return this.t.byteLength + this.v.byteLength + (this.staleAt?.length ?? 0) * 8;
  }
}
