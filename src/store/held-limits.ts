/**
 * Bounds on what the history holds over time, like a time-series database's head series limits: the series and
 * the work queues one target holds (whatever its pages bring scrape after scrape, not only one page's), and the
 * series and queues of every target together. Per-page limits (the scrape source's) cannot bound this: a target
 * bringing new series at every scrape stays under them while the history keeps every series for its retention.
 *
 * Contract (`planHeldLimits`, run by `History.append` before anything of a page is stored):
 * - A series is new when the target holds none with its key; a queue is new when the target holds no series of
 *   `queues.families` with its key (`queues.key` of the series' final labels, target labels applied). Counting is
 *   the engine's own: the history holds a queue exactly when the engine finds one in it.
 * - When the page's new series and queues would bring the target past `maxSeries` or `maxQueues`, or the history
 *   past `maxTotalSeries` or `maxTotalQueues`, the target's own stale series (held, not on this page) are evicted,
 *   oldest first by their newest sample: first the queue-family series of the stale queues needed to make room for
 *   the new queues, then any stale series needed to make room for the new series. Other targets lose nothing.
 * - When even evicting every stale series of the target would not make room, the page is refused whole with a
 *   `HeldLimitError` (code `held_series_limit` or `queue_limit`) and nothing is evicted.
 * - Nothing is counted when the page cannot bring any bound over (the common case costs nothing beyond the lookups an
 *   append makes anyway).
 */
import { keyLabels, type Labels } from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { applyTargetLabels } from './target-labels.js';
import type { SeriesRecord, TargetState } from './target-state.js';

/** How the engine finds work queues in series: the families that make one, and the key of the queue a series makes. */
export interface QueueKeying {
  readonly families: readonly string[];
  /** The queue's key from a series' final labels (target labels applied, without `__name__`). */
  readonly key: (labels: Labels) => string;
}

/** The bounds of one append: per target and across targets. `Infinity` for no bound. */
export interface HeldLimits {
  readonly maxSeries: number;
  readonly maxQueues: number;
  readonly maxTotalSeries: number;
  readonly maxTotalQueues: number;
  /** The same for every append to one history. */
  readonly queues: QueueKeying;
}

/** Which bound made room by evicting or refused a page. */
export type HeldLimitName = 'maxSeries' | 'maxQueues' | 'maxTotalSeries' | 'maxTotalQueues';

/** What an append evicted to stay within its bounds. */
export interface Eviction {
  readonly series: number;
  /** Stale queues among them: queues the target no longer holds any series of the queue families of. */
  readonly queues: number;
  /** The bounds that needed the room. */
  readonly limits: readonly HeldLimitName[];
}

/** A page refused because even evicting every stale series of its target would not make room for it. */
export class HeldLimitError extends Error {
  override readonly name = 'HeldLimitError';
  readonly code: 'held_series_limit' | 'queue_limit';
  readonly limit: HeldLimitName;
  /** The bound's value, and how many the target (or every target) would hold with the page. */
  readonly bound: number;
  readonly wouldHold: number;
  constructor(limit: HeldLimitName, bound: number, wouldHold: number) {
    const queues = limit === 'maxQueues' || limit === 'maxTotalQueues';
    const what = queues ? 'work queues' : 'series';
    const whose = limit === 'maxSeries' || limit === 'maxQueues' ? 'the target would hold' : 'all targets would hold';
    super(`${whose} ${wouldHold} ${what} with this page, over the limit of ${bound}, with every stale one evicted`);
    this.code = queues ? 'queue_limit' : 'held_series_limit';
    this.limit = limit;
    this.bound = bound;
    this.wouldHold = wouldHold;
  }
}

/** What the history tells the plan about every target, counted only when a plan needs it. */
export interface HistoryTotals {
  readonly series: number;
  /** Queues held by every target (the queue-family series of each, by key). */
  queues(): number;
}

/** The plan of one append: the series to evict first (none when nothing bites), and what it says of them. */
export interface HeldPlan {
  readonly evict: readonly SeriesRecord[];
  readonly eviction: Eviction | undefined;
}

const NOTHING: HeldPlan = { evict: [], eviction: undefined };

/**
 * The plan for appending `page` to `st` within `limits` (see the module contract). `map` holds, per series id of the
 * page, the target's live series with that key, or undefined for a new series; `queueFamilyOf` says whether a page
 * series belongs to a queue family. Throws `HeldLimitError` when the page does not fit.
 */
export function planHeldLimits(
  st: TargetState,
  page: ParsedPage,
  map: readonly (SeriesRecord | undefined)[],
  limits: HeldLimits,
  totals: HistoryTotals,
): HeldPlan {
  const families = new Set(limits.queues.families);
  const familyOfPage = page.families.map((f) => families.has(f.name));
  const pageFamilies = page.series.families;
  let newSeries = 0;
  let newQueueSeries = 0;
  for (let id = 0; id < page.series.count; id++) {
    if (map[id] !== undefined) continue;
    newSeries++;
    if (familyOfPage[pageFamilies[id] as number] === true) newQueueSeries++;
  }
  const held = st.seriesCount;
  const overSeries = held + newSeries > limits.maxSeries;
  const overTotalSeries = totals.series + newSeries > limits.maxTotalSeries;
  if (!overSeries && !overTotalSeries && newQueueSeries === 0) return NOTHING;

  // The queues held and the page's, by key; the page's new ones.
  const heldQueues = queuesHeld(st, limits.queues);
  const pageQueues = new Set<string>();
  for (let id = 0; id < page.series.count; id++) {
    if (familyOfPage[pageFamilies[id] as number] !== true) continue;
    const rec = map[id];
    pageQueues.add(
      rec !== undefined
        ? queueKeyOf(rec, limits.queues)
        : limits.queues.key(applyTargetLabels(keyLabels(page.series.key(id)), st.labels)),
    );
  }
  let newQueues = 0;
  for (const key of pageQueues) if (!heldQueues.has(key)) newQueues++;
  const totalQueues = newQueues > 0 && Number.isFinite(limits.maxTotalQueues) ? totals.queues() : 0;
  const queueRoom = Math.max(
    heldQueues.size + newQueues - limits.maxQueues,
    totalQueues + newQueues - limits.maxTotalQueues,
  );
  const seriesNeed = Math.max(held + newSeries - limits.maxSeries, totals.series + newSeries - limits.maxTotalSeries);
  if (queueRoom <= 0 && seriesNeed <= 0) return NOTHING;

  const onPage = new Set<SeriesRecord>();
  for (const rec of map) if (rec !== undefined) onPage.add(rec);
  const limitsHit: HeldLimitName[] = [];
  const evict: SeriesRecord[] = [];

  // Queues first: the oldest stale queues' queue-family series.
  let evictedQueues = 0;
  if (queueRoom > 0) {
    const stale = [...heldQueues].filter(([key]) => !pageQueues.has(key)).map(([, recs]) => recs);
    if (stale.length < queueRoom) {
      const perTarget = heldQueues.size + newQueues - limits.maxQueues;
      throw perTarget >= queueRoom
        ? new HeldLimitError('maxQueues', limits.maxQueues, heldQueues.size - stale.length + newQueues)
        : new HeldLimitError('maxTotalQueues', limits.maxTotalQueues, totalQueues - stale.length + newQueues);
    }
    stale.sort((a, b) => newestOf(a) - newestOf(b));
    for (const recs of stale.slice(0, queueRoom)) evict.push(...recs);
    evictedQueues = queueRoom;
    if (heldQueues.size + newQueues > limits.maxQueues) limitsHit.push('maxQueues');
    if (totalQueues + newQueues > limits.maxTotalQueues) limitsHit.push('maxTotalQueues');
  }

  // Then series: the oldest stale series not evicted already.
  const seriesRoom = seriesNeed - evict.length;
  if (seriesRoom > 0) {
    const chosen = new Set(evict);
    const stale = [...st.liveSeries()].filter((rec) => !onPage.has(rec) && !chosen.has(rec));
    if (stale.length < seriesRoom) {
      const staleTotal = stale.length + evict.length;
      throw held + newSeries - limits.maxSeries >= seriesNeed
        ? new HeldLimitError('maxSeries', limits.maxSeries, held - staleTotal + newSeries)
        : new HeldLimitError('maxTotalSeries', limits.maxTotalSeries, totals.series - staleTotal + newSeries);
    }
    stale.sort((a, b) => newestSample(a) - newestSample(b) || a.serial - b.serial);
    evict.push(...stale.slice(0, seriesRoom));
  }
  if (seriesNeed > 0) {
    if (overSeries) limitsHit.push('maxSeries');
    if (overTotalSeries) limitsHit.push('maxTotalSeries');
  }
  return { evict, eviction: { series: evict.length, queues: evictedQueues, limits: limitsHit } };
}

/** Queues one target holds: per key, its live series of the queue families. */
export function queuesHeld(st: TargetState, keying: QueueKeying): Map<string, SeriesRecord[]> {
  const out = new Map<string, SeriesRecord[]>();
  for (const family of keying.families) {
    for (const rec of st.byName.get(family)?.recs ?? []) {
      if (rec.dead) continue;
      const key = queueKeyOf(rec, keying);
      const recs = out.get(key);
      if (recs === undefined) out.set(key, [rec]);
      else recs.push(rec);
    }
  }
  return out;
}

/** The queue key of a held series of a queue family, made once per series. */
function queueKeyOf(rec: SeriesRecord, keying: QueueKeying): string {
  rec.queueKey ??= keying.key(rec.labels);
  return rec.queueKey;
}

/** Time of a series' newest sample; -Infinity when it holds none. */
function newestSample(rec: SeriesRecord): number {
  const b = rec.buf;
  return b.end > b.start ? b.time(b.end - 1) : Number.NEGATIVE_INFINITY;
}

function newestOf(recs: readonly SeriesRecord[]): number {
  let newest = Number.NEGATIVE_INFINITY;
  for (const rec of recs) newest = Math.max(newest, newestSample(rec));
  return newest;
}
