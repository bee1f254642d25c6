/**
 * The samples of one series: a bounded, time-ordered buffer in one typed array.
 *
 * Invariants: `data` holds `cap` times followed by `cap` values; live samples are indexes
 * `[start, end)` of both halves, strictly increasing in time, and contiguous (the buffer slides:
 * when it is full, the live part moves to the front or the array grows), so a time window is two
 * `subarray` views and costs no copy. Stale markers (Prometheus's "this series vanished" points)
 * are kept apart in `staleAt`, ascending, never at the time of a sample.
 *
 * Limits (shared by all buffers of a history): at most `maxSamples` samples (the oldest is
 * dropped), and samples older than the newest point minus `retentionMs` are dropped at each append.
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

export interface BufferLimits {
  readonly maxSamples: number;
  readonly retentionMs: number;
}

const INITIAL_CAPACITY = 8;

export class SeriesBuffer {
  #data: Float64Array;
  #cap: number;
  start = 0;
  end = 0;
  staleAt: number[] | undefined;
  readonly #limits: BufferLimits;

  constructor(limits: BufferLimits, initialCapacity = INITIAL_CAPACITY) {
    this.#limits = limits;
    this.#cap = Math.max(2, Math.min(initialCapacity, limits.maxSamples + 1));
    this.#data = new Float64Array(2 * this.#cap);
  }

  get length(): number {
    return this.end - this.start;
  }

  /** Time of sample `i` (start ≤ i < end). */
  time(i: number): number {
    return this.#data[i] as number;
  }

  /** Value of sample `i` (start ≤ i < end). */
  value(i: number): number {
    return this.#data[this.#cap + i] as number;
  }

  /** Views of the times and values of samples `[i, j)`; valid until the next append. */
  views(i: number, j: number): { t: Float64Array; v: Float64Array } {
    const k = Math.max(i, j);
    return { t: this.#data.subarray(i, k), v: this.#data.subarray(this.#cap + i, this.#cap + k) };
  }

  /** Time of the newest sample or stale marker, or -Infinity. */
  newest(): number {
    const s = this.staleAt;
    const lastStale = s === undefined || s.length === 0 ? Number.NEGATIVE_INFINITY : (s[s.length - 1] as number);
    const lastSample = this.end > this.start ? this.time(this.end - 1) : Number.NEGATIVE_INFINITY;
    return Math.max(lastStale, lastSample);
  }

  /** True when the newest point is a stale marker. */
  isStale(): boolean {
    const s = this.staleAt;
    if (s === undefined || s.length === 0) return false;
    return this.end === this.start || (s[s.length - 1] as number) > this.time(this.end - 1);
  }

  append(time: number, value: number): AppendOutcome {
    const end = this.end;
    if (end > this.start) {
      const last = this.time(end - 1);
      if (time <= last) {
        if (time < last) return AppendOutcome.OutOfOrder;
        const lv = this.value(end - 1);
        return lv === value || (Number.isNaN(lv) && Number.isNaN(value)) ? AppendOutcome.Same : AppendOutcome.Duplicate;
      }
    }
    const s = this.staleAt;
    if (s !== undefined && s.length > 0 && time <= (s[s.length - 1] as number)) return AppendOutcome.OutOfOrder;
    this.expire(time);
    if (this.end - this.start >= this.#limits.maxSamples) this.start++;
    if (this.end === this.#cap) this.#makeRoom();
    this.#data[this.end] = time;
    this.#data[this.#cap + this.end] = value;
    this.end++;
    return AppendOutcome.Appended;
  }

  /** Adds a stale marker at `time` unless the series is empty, already stale or has a newer point. */
  markStale(time: number): boolean {
    if (this.isStale() || time <= this.newest() || this.end === this.start) return false;
    this.expire(time);
    this.staleAt ??= [];
    this.staleAt.push(time);
    return true;
  }

  /** Drops samples and stale markers older than `now - retentionMs`. */
  expire(now: number): void {
    const cutoff = now - this.#limits.retentionMs;
    if (!(cutoff > Number.NEGATIVE_INFINITY)) return;
    let start = this.start;
    while (start < this.end && this.time(start) < cutoff) start++;
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

  #makeRoom(): void {
    const live = this.end - this.start;
    const cap = this.#cap;
    const data = this.#data;
    if (this.start > 0 && live <= cap * 0.75) {
      data.copyWithin(0, this.start, this.end);
      data.copyWithin(cap, cap + this.start, cap + this.end);
    } else {
      const max = this.#limits.maxSamples;
      const limit = max + Math.max(8, Math.ceil(max / 4));
      // Grow by 4: series of one scrape grow in lockstep, so fewer, larger steps mean fewer
      // moments when every series reallocates at once.
      const next = Math.max(live + 1, Math.min(cap * 4, limit));
      const grown = new Float64Array(2 * next);
      grown.set(data.subarray(this.start, this.end), 0);
      grown.set(data.subarray(cap + this.start, cap + this.end), next);
      this.#data = grown;
      this.#cap = next;
    }
    this.start = 0;
    this.end = live;
  }

  /** Index of the first sample with time >= `time`. */
  lowerBound(time: number): number {
    let lo = this.start;
    let hi = this.end;
    const data = this.#data;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((data[mid] as number) < time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index after the last sample with time <= `time`. */
  upperBound(time: number): number {
    let lo = this.start;
    let hi = this.end;
    const data = this.#data;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((data[mid] as number) <= time) lo = mid + 1;
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

  /** Bytes held by the samples array and stale markers. */
  bytes(): number {
    return this.#data.byteLength + (this.staleAt?.length ?? 0) * 8;
  }
}
