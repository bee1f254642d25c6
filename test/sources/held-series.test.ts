/**
 * The scrape source keeps each target within its held limits over time and says so where an operator looks:
 * `/api/v1/targets` carries the warning of a scrape stored after stale series were evicted, or the error of a page
 * refused, each naming the setting that raises the limit; the other targets go on.
 */
import { describe, expect, it } from 'vitest';
import { staticTargets } from '../../src/discovery/static.js';
import type { Target } from '../../src/discovery/target.js';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { scrapeTargetsView } from '../../src/service/target-status.js';
import type { ScrapeSource } from '../../src/sources/scrape-source.js';
import { churningHandler } from '../support/hostile-targets.js';
import { ManualClock, queuePage, scrapeSource, serve, servePage } from './scrape-support.js';

const INTERVAL_MS = 15_000;

/** What `/api/v1/targets` shows of each of `urls`, in their order. */
function views(source: ScrapeSource, urls: readonly string[]) {
  const view = scrapeTargetsView(staticTargets(urls), source.health());
  return urls.map((url) => (view.mode === 'scrape' ? view.targets.find((t) => t.url === url) : undefined));
}

describe('held series over time', () => {
  it('evicts a churning target down to its bound and says so in /api/v1/targets; its neighbour is untouched', async () => {
    const churner = await serve(churningHandler(40));
    const healthy = await servePage(() => queuePage({ depth: 3, adds: 7 }));
    const urls = [`${churner.origin}/metrics`, `${healthy.origin}/metrics`];
    const [churnerKey, healthyKey] = urls.map((url) => (staticTargets(urls).find((t) => t.url === url) as Target).key);
    const clock = new ManualClock();
    const source = scrapeSource({
      targets: staticTargets(urls),
      clock,
      intervalMs: INTERVAL_MS,
      seriesLimit: 50,
      heldSeriesLimit: 100,
    });
    for (let round = 0; round < 5; round++) {
      if (round > 0) clock.advance(INTERVAL_MS);
      await source.scrapeOnce();
      const held = source.history.targets().find((t) => t.id === churnerKey)?.series ?? 0;
      expect(held).toBeLessThanOrEqual(100);
    }
    const [churning, neighbour] = views(source, urls);
    expect(churning).toMatchObject({ up: true, lastError: null });
    expect(churning?.lastWarning?.code).toBe('held_series_limit');
    expect(churning?.lastWarning?.message).toBe(
      "40 stale series (no sample in the latest scrape) evicted, oldest first, to stay within 100 (the target's held series limit, scrape.heldSeriesLimit or WQD_SCRAPE_HELD_SERIES_LIMIT)",
    );
    expect(neighbour).toMatchObject({ up: true, lastError: null, lastWarning: null });
    const depth = source.history.select({ metric: WORKQUEUE.depth, target: healthyKey as string });
    expect(depth[0]?.t).toHaveLength(5);
  });

  it('refuses a page that would not fit even with every stale series evicted, naming the setting', async () => {
    const churner = await serve(churningHandler(40));
    const url = `${churner.origin}/metrics`;
    const source = scrapeSource({ targets: staticTargets([url]), clock: new ManualClock(), heldSeriesLimit: 30 });
    await source.scrapeOnce();
    const [view] = views(source, [url]);
    expect(view?.lastError?.code).toBe('held_series_limit');
    expect(view?.lastError?.message).toMatch(
      /the target would hold 40 series with this page, over the limit of 30, with every stale one evicted \(the target's held series limit, scrape\.heldSeriesLimit or WQD_SCRAPE_HELD_SERIES_LIMIT\); the page was not stored$/,
    );
    expect(source.history.stats().series).toBe(0);
  });

  it('refuses the target whose page would pass the total, and no other target loses a series', async () => {
    const first = await servePage(() => queuePage({ depth: 1, adds: 2, name: 'first' }));
    const churner = await serve(churningHandler(40));
    const urls = [`${first.origin}/metrics`, `${churner.origin}/metrics`];
    const source = scrapeSource({
      targets: staticTargets(urls),
      clock: new ManualClock(),
      totalSeriesLimit: 30,
    });
    await source.scrapeOnce();
    const [kept, refused] = views(source, urls);
    expect(kept).toMatchObject({ up: true, lastError: null });
    expect(refused?.lastError?.code).toBe('held_series_limit');
    expect(refused?.lastError?.message).toMatch(
      /all targets would hold 4[02] series with this page, over the limit of 30, with every stale one evicted \(the total series limit of all targets, scrape\.totalSeriesLimit or WQD_SCRAPE_TOTAL_SERIES_LIMIT\)/,
    );
    expect(source.history.stats().series).toBe(2);
  });
});
