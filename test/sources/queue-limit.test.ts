/**
 * The queue limit counts work queues as the engine finds them: every series of depth or adds, keyed by every label
 * but `le`, `priority` and `quantile` (the engine's own key, not a second copy of it). A page over the limit is
 * refused in one error naming the setting; a page at the limit is stored, and the engine finds as many queues in it.
 */
import { describe, expect, it } from 'vitest';
import { profiles, syntheticPage } from '../../bench/synthetic-managers.js';
import { staticTargets } from '../../src/discovery/static.js';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { diagnoseSource } from '../../src/service/diagnose-source.js';
import type { ScrapeSource } from '../../src/sources/scrape-source.js';
import { ManualClock, scrapeSource, servePage } from './scrape-support.js';

const RUNBOOKS = 'https://example.invalid/runbooks';
/** Every source scrapes at this time; the diagnoses are made at it. */
const CLOCK = new ManualClock();
const AT = { atMs: CLOCK.t, runbookBaseUrl: RUNBOOKS };

async function scrapeOnceWith(page: string, queueLimit: number): Promise<ScrapeSource> {
  const server = await servePage(() => page);
  const source = scrapeSource({
    targets: staticTargets([`${server.origin}/metrics`]),
    clock: CLOCK,
    queueLimit,
    seriesLimit: 20_000,
  });
  await source.scrapeOnce();
  return source;
}

function family(name: string, type: string, labels: readonly string[]): string[] {
  return [`# TYPE ${name} ${type}`, ...labels.map((l, i) => `${name}{${l}} ${i}`)];
}

const page = (lines: readonly string[]) => `${lines.join('\n')}\n`;

describe('the queue limit', () => {
  it('refuses 9,999 controllers under one queue name: 9,999 queues to the engine', async () => {
    const labels = Array.from({ length: 9_999 }, (_, i) => `controller="c${i}",name="q"`);
    const source = await scrapeOnceWith(page(family(WORKQUEUE.depth, 'gauge', labels)), 250);
    const [health] = source.health();
    expect(health?.lastError?.code).toBe('queue_limit');
    expect(health?.lastError?.message).toMatch(
      /more than 250 work queues \(the target's queue limit, scrape\.queueLimit or WQD_SCRAPE_QUEUE_LIMIT\); the page was not stored$/,
    );
    expect(source.history.stats().series).toBe(0);
    expect(source.targets()[0]?.error?.code).toBe('queue_limit');
  });

  it('counts queues that only workqueue_adds_total tells of', async () => {
    const labels = (n: number) => Array.from({ length: n }, (_, i) => `name="q${i}"`);
    const over = await scrapeOnceWith(page(family(WORKQUEUE.adds, 'counter', labels(251))), 250);
    expect(over.health()[0]?.lastError?.code).toBe('queue_limit');
    const at = await scrapeOnceWith(page(family(WORKQUEUE.adds, 'counter', labels(250))), 250);
    expect(at.health()[0]).toMatchObject({ up: true, lastError: null });
  });

  it('stores a healthy page at the limit, in which the engine finds exactly that many queues', async () => {
    const manager = syntheticPage(profiles(0, 40), 3600);
    const at = await scrapeOnceWith(manager, 40);
    expect(at.health()[0]).toMatchObject({ up: true, lastError: null });
    const report = await diagnoseSource(at, AT);
    expect(report.queues).toHaveLength(40);
    const over = await scrapeOnceWith(manager, 39);
    expect(over.health()[0]?.lastError?.code).toBe('queue_limit');
  });

  it('counts what the engine counts: priorities and buckets are one queue, depth and adds of a queue one', async () => {
    const mixed = page([
      ...family(WORKQUEUE.depth, 'gauge', [
        'controller="a",name="a",priority="0"',
        'controller="a",name="a",priority="-100"',
        'controller="b",name="shared"',
        'name="component-base"',
      ]),
      ...family(WORKQUEUE.adds, 'counter', [
        'controller="a",name="a"',
        'controller="c",name="shared"',
        'name="adds-only"',
      ]),
      `# TYPE ${WORKQUEUE.queueDuration} histogram`,
      `${WORKQUEUE.queueDuration}_bucket{name="histogram-only",le="1"} 1`,
      `${WORKQUEUE.queueDuration}_bucket{name="histogram-only",le="+Inf"} 1`,
      `${WORKQUEUE.queueDuration}_count{name="histogram-only"} 1`,
    ]);
    const source = await scrapeOnceWith(mixed, 5);
    expect(source.health()[0]).toMatchObject({ up: true, lastError: null });
    const report = await diagnoseSource(source, AT);
    // a, shared of b, shared of c, component-base, adds-only: a histogram alone makes no queue.
    expect(report.queues).toHaveLength(5);
    expect((await scrapeOnceWith(mixed, 4)).health()[0]?.lastError?.code).toBe('queue_limit');
  });
});
