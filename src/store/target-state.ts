/**
 * Per-target bookkeeping of the history: the live series of one target, indexed by the hash of their
 * page key (the series key as scraped, before target labels: page-key.ts) and by metric name, and what
 * the target's previous scrape held.
 *
 * Contract:
 * - `add` and `remove` keep `byHash`, `byName` and `seriesCount` in step. A removed series is marked
 *   `dead` and stays in its name list, counted in `dead`, until the list is next read in storage
 *   order (series-selection.ts); a name list whose series are all dead is dropped at once.
 * - `liveSeries()` visits every live series once, in no set order (`serial` gives the order they came
 *   in); a series removed meanwhile is not visited, one added meanwhile may be.
 * - `findByKey(key)` and `findInPage(page, id)` find the live series with that page key, compared in full
 *   (page-key.ts), without making the series' key string.
 * - Key hashes are cut to 30 bits so that, as map keys, they stay small integers (no boxing).
 */
import type { Labels } from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { hashRange } from '../exposition/series-index.js';
import { hasPageKey, isPageSeries } from './page-key.js';
import type { SeriesBuffer } from './series-buffer.js';

export interface SeriesRecord {
  readonly target: TargetState;
  readonly name: string;
  readonly labels: Labels;
  /** The page key, when it is not the written key of `name` and `labels` (page-key.ts); `undefined` otherwise. */
  readonly keptPageKey: string | undefined;
  /** The `pageKeyHash` of the page key. */
  readonly hash: number;
  readonly buf: SeriesBuffer;
  withName: Labels | undefined;
  /** Epoch of the last scrape that contained this series; -1 when never scraped. */
  seenEpoch: number;
  /** The series' samples carry their own timestamps: no staleness tracking. */
  explicitTs: boolean;
  /** Forgotten (its name list drops it when next queried). */
  dead: boolean;
  /** The key of the work queue a series of a queue family makes (held-limits.ts); made when first needed. */
  queueKey: string | undefined;
  /** Order of arrival among the history's series (held-limits.ts evicts the older of two as stale). */
  readonly serial: number;
}

/** The series of one metric name in one target; sorted and compacted when queried. */
export interface NameList {
  recs: SeriesRecord[];
  /** `recs` is in storage order. */
  sorted: boolean;
  /** Forgotten series still in `recs`. */
  dead: number;
}

/** Hashes are cut to 30 bits so that, as map keys, they stay small integers (no boxing). */
const SMI_MASK = 0x3fffffff;

/** The index hash of a page key. */
export function pageKeyHash(key: string): number {
  return hashRange(key, 0, key.length) & SMI_MASK;
}

export class TargetState {
  readonly id: string;
  readonly labels: Labels;
  /** Live series by the hash of their page key (a list on collision, replaced, not changed, on removal). */
  readonly byHash = new Map<number, SeriesRecord | SeriesRecord[]>();
  readonly byName = new Map<string, NameList>();
  /** How many series are live. */
  seriesCount = 0;
  epoch = 0;
  lastScrapeMs = Number.NEGATIVE_INFINITY;
  /**
   * Series of the previous scrape by page series id, with their key hashes: a target's pages
   * usually list the same series in the same order, so this is the first guess for each one.
   */
  lastHashes: Int32Array | undefined;
  lastRecs: (SeriesRecord | undefined)[] = [];
  queue: Promise<unknown> = Promise.resolve();
  /** The scrape log: a point per scrape, 1 when it was appended, 0 when it failed (Prometheus's `up`). */
  readonly scrapes: SeriesBuffer;

  constructor(id: string, labels: Labels, scrapes: SeriesBuffer) {
    this.id = id;
    this.labels = labels;
    this.scrapes = scrapes;
  }

  /** Indexes a new live series (its `target` must be this one). */
  add(rec: SeriesRecord): void {
    this.seriesCount++;
    const same = this.byHash.get(rec.hash);
    if (same === undefined) this.byHash.set(rec.hash, rec);
    else if (Array.isArray(same)) same.push(rec);
    else this.byHash.set(rec.hash, [same, rec]);
    let list = this.byName.get(rec.name);
    if (list === undefined) {
      list = { recs: [], sorted: true, dead: 0 };
      this.byName.set(rec.name, list);
    }
    if (list.recs.length > 0) list.sorted = false;
    list.recs.push(rec);
  }

  /** Forgets a live series; false when it was not live. */
  remove(rec: SeriesRecord): boolean {
    const same = this.byHash.get(rec.hash);
    if (same === rec) {
      this.byHash.delete(rec.hash);
    } else if (Array.isArray(same) && same.includes(rec)) {
      const rest = same.filter((r) => r !== rec);
      this.byHash.set(rec.hash, rest.length === 1 ? (rest[0] as SeriesRecord) : rest);
    } else {
      return false;
    }
    this.seriesCount--;
    rec.dead = true;
    const list = this.byName.get(rec.name);
    if (list !== undefined) {
      list.dead++;
      if (list.dead === list.recs.length) this.byName.delete(rec.name);
    }
    return true;
  }

  /** Every live series (see the contract). */
  *liveSeries(): Generator<SeriesRecord, void, undefined> {
    for (const same of this.byHash.values()) {
      if (!Array.isArray(same)) yield same;
      else for (const rec of same) if (!rec.dead) yield rec;
    }
  }

  /** The live series whose page key is `key`. */
  findByKey(key: string): SeriesRecord | undefined {
    const same = this.byHash.get(pageKeyHash(key));
    if (same === undefined) return undefined;
    if (!Array.isArray(same)) return hasPageKey(same, key) ? same : undefined;
    return same.find((r) => hasPageKey(r, key));
  }

  /** The live series for series `id` of a page, found by hash without making the key string. */
  findInPage(page: ParsedPage, id: number): SeriesRecord | undefined {
    const same = this.byHash.get((page.series.hashes[id] as number) & SMI_MASK);
    if (same === undefined) return undefined;
    if (!Array.isArray(same)) return isPageSeries(same, page.series, id) ? same : undefined;
    return same.find((r) => isPageSeries(r, page.series, id));
  }
}
