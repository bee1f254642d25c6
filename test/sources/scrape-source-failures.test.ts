import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { staticTargets } from '../../src/discovery/static.js';
import { WORKQUEUE } from '../../src/metrics/names.js';
import type { ScrapeEvent } from '../../src/sources/scrape-source.js';
import { gzipBomb } from '../support/gzip-bomb.js';
import { rangeOver } from '../support/history-range.js';
import { freePort } from '../support/local-server.js';
import {
  ManualClock,
  queuePage,
  scrapeSource,
  serve,
  serveOnPort,
  servePage,
  TEXT_CT,
  type TestScrapeOptions,
} from './scrape-support.js';

const INTERVAL = 15_000;

function depthValues(src: { history: { select: (s: { metric: string }) => { v: Float64Array }[] } }): number[][] {
  return src.history.select({ metric: WORKQUEUE.depth }).map((view) => [...view.v]);
}

/**
 * A target serving `page` beside a healthy one (depth 4, 9 adds), scraped by one source on a manual clock with
 * `options`.
 */
async function besideHealthy(page: () => string, options: Partial<TestScrapeOptions> = {}) {
  const hostile = await servePage(page);
  const healthy = await servePage(() => queuePage({ depth: 4, adds: 9 }));
  const clock = new ManualClock();
  const src = scrapeSource({
    targets: staticTargets([`${hostile.origin}/metrics`, `${healthy.origin}/metrics`]),
    clock,
    ...options,
  });
  return { hostile, healthy, clock, src };
}

describe('scrape source: failing targets', () => {
  it('times out a slow target with code timeout while the other targets are scraped', async () => {
    const held: http.ServerResponse[] = [];
    const slow = await serve((_req, res) => {
      held.push(res);
    });
    const fast = await servePage(() => queuePage({ depth: 4, adds: 9 }));
    const clock = new ManualClock();
    const events: ScrapeEvent[] = [];
    const src = scrapeSource({
      targets: staticTargets([`${slow.origin}/metrics`, `${fast.origin}/metrics`]),
      clock,
      intervalMs: 1_000,
      timeoutMs: 200,
      onScrape: (e) => events.push(e),
    });
    await src.scrapeOnce();
    const health = new Map(src.health().map((h) => [h.key, h]));
    expect(health.get(`${slow.origin}/metrics`)).toMatchObject({
      up: false,
      consecutiveFailures: 1,
      lastError: { code: 'timeout', at: clock.t },
    });
    expect(health.get(`${slow.origin}/metrics`)?.lastError?.message).toContain(`GET ${slow.origin}/metrics`);
    expect(health.get(`${fast.origin}/metrics`)).toMatchObject({ up: true, lastError: null, samples: 2 });
    expect(src.history.instant(WORKQUEUE.depth, [], clock.t).map((s) => s.value)).toEqual([4]);
    const byUrl = new Map(events.map((e) => [e.target.url, e]));
    expect(byUrl.get(`${slow.origin}/metrics`)).toMatchObject({ ok: false, errorCode: 'timeout', samples: 0 });
    expect(byUrl.get(`${fast.origin}/metrics`)).toMatchObject({ ok: true, samples: 2 });
    // Never scraped successfully: the engine is told the target could not be read.
    const slowState = src.targets().find((t) => t.name === `static/127.0.0.1:${slow.port}`);
    expect(slowState?.error?.code).toBe('timeout');
  });

  it('fails a page over the size limit with too_large and keeps the data it had', async () => {
    let huge = false;
    const lines = [`# TYPE ${WORKQUEUE.depth} gauge`];
    for (let i = 0; i < 5_000; i++) lines.push(`${WORKQUEUE.depth}{controller="c",name="queue-${i}"} ${i}`);
    const hugePage = `${lines.join('\n')}\n`;
    const s = await servePage(() => (huge ? hugePage : queuePage({ depth: 7, adds: 1 })));
    const clock = new ManualClock();
    const limit = 64 * 1024;
    expect(Buffer.byteLength(hugePage)).toBeGreaterThan(2 * limit);
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock, maxBytes: limit });
    await src.scrapeOnce();
    const first = clock.t;
    huge = true;
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    const h = src.health()[0];
    expect(h).toMatchObject({
      up: false,
      lastError: { code: 'too_large' },
      bytes: queuePage({ depth: 7, adds: 1 }).length,
    });
    expect(h?.lastError?.message).toContain(`GET ${s.origin}/metrics`);
    // Nothing held is lost; the failed scrape hides the series from instant queries from then on.
    expect(src.history.select({ metric: WORKQUEUE.depth }).map((v) => [[...v.t], [...v.v]])).toEqual([[[first], [7]]]);
    expect(src.history.instant(WORKQUEUE.depth, [], clock.t)).toEqual([]);
    expect(src.history.instant(WORKQUEUE.depth, [], clock.t - 1).map((x) => x.value)).toEqual([7]);
  });

  it('fails a page over the series limit with series_limit, keeps its data, and scrapes the other target', async () => {
    let bomb = false;
    const lines = [`# TYPE ${WORKQUEUE.depth} gauge`];
    for (let i = 0; i < 500; i++) lines.push(`${WORKQUEUE.depth}{controller="c",name="queue-${i}"} ${i}`);
    // Families the diagnoses do not read are not counted.
    for (let i = 0; i < 500; i++) lines.push(`go_unrelated_series{i="${i}"} ${i}`);
    const bombPage = `${lines.join('\n')}\n`;
    const { hostile, healthy, clock, src } = await besideHealthy(
      () => (bomb ? bombPage : queuePage({ depth: 7, adds: 1 })),
      { seriesLimit: 100 },
    );
    await src.scrapeOnce();
    const first = clock.t;
    bomb = true;
    for (let round = 0; round < 2; round++) {
      clock.advance(INTERVAL);
      await src.scrapeOnce();
    }
    const health = new Map(src.health().map((h) => [h.key, h]));
    expect(health.get(`${hostile.origin}/metrics`)).toMatchObject({ up: false, lastError: { code: 'series_limit' } });
    expect(health.get(`${hostile.origin}/metrics`)?.lastError?.message).toContain('more than 100 series');
    expect(health.get(`${healthy.origin}/metrics`)).toMatchObject({ up: true, lastError: null });
    const hostileState = src.targets().find((t) => t.name === `static/127.0.0.1:${hostile.port}`);
    expect(hostileState?.error?.code).toBe('series_limit');
    // The hostile target's history is what it was; the healthy one's goes on.
    const depth = new Map(
      src.history.select({ metric: WORKQUEUE.depth }).map((v) => [v.labels.instance, [[...v.t], [...v.v]]]),
    );
    expect(depth.get(`127.0.0.1:${hostile.port}`)).toEqual([[first], [7]]);
    expect(depth.get(`127.0.0.1:${healthy.port}`)).toEqual([
      [first, first + INTERVAL, first + 2 * INTERVAL],
      [4, 4, 4],
    ]);
    expect(() => scrapeSource({ targets: [], seriesLimit: 0 })).toThrow(RangeError);
  });

  it('fails a page with a label value over the limit with label_limit; the other target goes on', async () => {
    const huge = 'v'.repeat(100_000);
    let hostilePage = queuePage({ depth: 7, adds: 1 });
    const { hostile, healthy, clock, src } = await besideHealthy(() => hostilePage);
    await src.scrapeOnce();
    // Long values elsewhere on the page (families the diagnoses do not read) are not looked at.
    hostilePage = `${queuePage({ depth: 8, adds: 2 })}# TYPE go_info gauge\ngo_info{version="${huge}"} 1\n`;
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    expect(src.health().every((h) => h.up)).toBe(true);
    hostilePage = `# TYPE ${WORKQUEUE.depth} gauge\n${WORKQUEUE.depth}{controller="c",name="${huge}"} 1\n`;
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    const health = new Map(src.health().map((h) => [h.key, h]));
    const error = health.get(`${hostile.origin}/metrics`)?.lastError;
    expect(error?.code).toBe('label_limit');
    expect(error?.message).toContain('a series has a "name" label of 100000 characters, over the limit of 1024');
    expect(error?.message).toContain('WQD_SCRAPE_LABEL_VALUE_LIMIT');
    expect(error?.message.length).toBeLessThan(400);
    expect(health.get(`${healthy.origin}/metrics`)).toMatchObject({ up: true, lastError: null });
    expect(src.history.select({ metric: WORKQUEUE.depth }).every((v) => (v.labels.name ?? '').length < 100)).toBe(true);
  });

  it('fails a page with a series over the label count limit with label_limit; the other target goes on', async () => {
    const labels = (n: number): string => Array.from({ length: n }, (_, i) => `l${i}="x"`).join(',');
    let hostilePage = `# TYPE ${WORKQUEUE.depth} gauge\n${WORKQUEUE.depth}{name="q",${labels(29)}} 1\n`;
    const { hostile, healthy, clock, src } = await besideHealthy(() => hostilePage);
    // 30 labels: the default limit, accepted.
    await src.scrapeOnce();
    expect(src.health().every((h) => h.up)).toBe(true);
    hostilePage = `# TYPE ${WORKQUEUE.depth} gauge\n${WORKQUEUE.depth}{name="q",${labels(10_000)}} 1\n`;
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    const health = new Map(src.health().map((h) => [h.key, h]));
    const error = health.get(`${hostile.origin}/metrics`)?.lastError;
    expect(error?.code).toBe('label_limit');
    expect(error?.message).toContain('a series has more than 30 labels');
    expect(error?.message).toContain('WQD_SCRAPE_LABEL_LIMIT');
    expect(health.get(`${healthy.origin}/metrics`)).toMatchObject({ up: true, lastError: null });
    // The hostile target keeps the series it had; nothing of the refused page was stored.
    expect(src.history.select({ metric: WORKQUEUE.depth }).every((v) => Object.keys(v.labels).length < 40)).toBe(true);
    expect(depthValues(src)).toHaveLength(2);
  });

  it('fails a page with more queues than the queue limit with queue_limit; the other target goes on', async () => {
    const queues = (n: number): string =>
      `# TYPE ${WORKQUEUE.depth} gauge\n${Array.from({ length: n }, (_, i) => `${WORKQUEUE.depth}{name="q${i}"} 1\n`).join('')}`;
    let hostilePage = queues(3);
    const { hostile, healthy, clock, src } = await besideHealthy(() => hostilePage, { queueLimit: 3 });
    await src.scrapeOnce();
    expect(src.health().every((h) => h.up)).toBe(true);
    hostilePage = queues(4);
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    const health = new Map(src.health().map((h) => [h.key, h]));
    const error = health.get(`${hostile.origin}/metrics`)?.lastError;
    expect(error?.code).toBe('queue_limit');
    expect(error?.message).toContain('more than 3 work queues');
    expect(health.get(`${healthy.origin}/metrics`)).toMatchObject({ up: true, lastError: null });
    const names = src.history.select({ metric: WORKQUEUE.depth }).map((v) => v.labels.name);
    expect(names).not.toContain('q3');
    expect(names).toHaveLength(4);
  });

  it('stops reading a gzip bomb at the size limit with too_large', async () => {
    const gzip = gzipBomb(64 * 1024, TEXT_CT); // 64 GiB uncompressed, about 68 MB compressed
    const bomb = await serve(gzip.handler);
    const fine = await servePage(() => queuePage({ depth: 1, adds: 1 }));
    const clock = new ManualClock();
    const events: ScrapeEvent[] = [];
    const limit = 1 << 20;
    const src = scrapeSource({
      targets: staticTargets([`${bomb.origin}/metrics`, `${fine.origin}/metrics`]),
      clock,
      maxBytes: limit,
      onScrape: (e) => events.push(e),
    });
    await src.scrapeOnce();
    const health = new Map(src.health().map((h) => [h.key, h]));
    expect(health.get(`${bomb.origin}/metrics`)).toMatchObject({ up: false, lastError: { code: 'too_large' } });
    expect(health.get(`${fine.origin}/metrics`)).toMatchObject({ up: true });
    const event = events.find((e) => e.target.url === `${bomb.origin}/metrics`);
    expect(event).toMatchObject({ ok: false, errorCode: 'too_large' });
    expect(event?.bytes).toBeGreaterThan(limit);
    expect(event?.bytes).toBeLessThanOrEqual(limit + (1 << 20));
    await gzip.closed();
    expect(gzip.sent()).toBeLessThan(gzip.compressedBytes / 4);
  });

  it('reports a malformed page as parse_error naming line and column, and loses nothing already held', async () => {
    let malformed = false;
    const bad = `# TYPE ${WORKQUEUE.depth} gauge\n${WORKQUEUE.depth}{name="a"} 1\n${WORKQUEUE.depth}{name="b" 2\n`;
    const s = await servePage(() => (malformed ? bad : queuePage({ depth: 3, adds: 30 })));
    const clock = new ManualClock();
    const events: ScrapeEvent[] = [];
    const src = scrapeSource({
      targets: staticTargets([`${s.origin}/metrics`]),
      clock,
      onScrape: (e) => events.push(e),
    });
    await src.scrapeOnce();
    const first = clock.t;
    malformed = true;
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    const h = src.health()[0];
    expect(h?.lastError).toEqual({
      code: 'parse_error',
      message: `${s.origin}/metrics: line 3, column 26: expected comma or closing brace, got "2"`,
      at: clock.t,
    });
    expect(events.map((e) => [e.ok, e.errorCode])).toEqual([
      [true, undefined],
      [false, 'parse_error'],
    ]);
    // The valid first line of the malformed page was not stored; the earlier scrape is intact.
    expect(depthValues(src)).toEqual([[3]]);
    expect(src.history.select({ metric: WORKQUEUE.adds }).map((v) => [[...v.t], [...v.v]])).toEqual([[[first], [30]]]);
    expect(src.history.instant(WORKQUEUE.adds, [], clock.t)).toEqual([]);
    // One failed scrape after a good one is not yet a target error.
    expect(src.targets()[0]?.error).toBeUndefined();
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    expect(src.targets()[0]?.error).toEqual({
      code: 'parse_error',
      message: `${s.origin}/metrics: line 3, column 26: expected comma or closing brace, got "2"`,
    });
  });

  it('reports HTTP 500 as http_status', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom');
    });
    const clock = new ManualClock();
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock });
    await src.scrapeOnce();
    const message = `GET ${s.origin}/metrics: HTTP 500 Internal Server Error`;
    expect(src.health()[0]).toMatchObject({
      up: false,
      consecutiveFailures: 1,
      lastError: { code: 'http_status', message, at: clock.t },
      samples: null,
    });
    expect(src.targets()).toEqual([
      {
        name: `static/127.0.0.1:${s.port}`,
        labels: { instance: `127.0.0.1:${s.port}`, job: 'static' },
        error: { code: 'http_status', message },
      },
    ]);
    expect(src.dataRange()).toBeUndefined();
  });

  it('follows a flapping target: health toggles, stale markers hide it after each failure', async () => {
    let n = 0;
    const s = await serve((_req, res) => {
      n++;
      if (n % 2 === 0) {
        res.writeHead(500);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.end(queuePage({ depth: n, adds: 10 * n }));
    });
    const clock = new ManualClock();
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock });
    const times: number[] = [];
    const seen: unknown[] = [];
    for (let i = 0; i < 6; i++) {
      if (i > 0) clock.advance(INTERVAL);
      times.push(clock.t);
      await src.scrapeOnce();
      const h = src.health()[0];
      seen.push([
        h?.up,
        h?.consecutiveFailures,
        h?.lastError?.code ?? null,
        src.history.instant(WORKQUEUE.depth, [], clock.t).map((x) => x.value),
        src.targets()[0]?.error?.code ?? null,
      ]);
    }
    expect(seen).toEqual([
      [true, 0, null, [1], null],
      [false, 1, 'http_status', [], null],
      [true, 0, null, [3], null],
      [false, 1, 'http_status', [], null],
      [true, 0, null, [5], null],
      [false, 1, 'http_status', [], null],
    ]);
    // Only the good scrapes hold samples; range functions read across the gaps.
    const [view] = src.history.select({ metric: WORKQUEUE.adds });
    expect([...(view?.t ?? [])]).toEqual([times[0], times[2], times[4]]);
    expect([...(view?.v ?? [])]).toEqual([10, 30, 50]);
    // increase over [t0, t4]: (50 - 10), neither end extrapolated (samples at the window's edges).
    const at = times[4] as number;
    expect(
      rangeOver(src.history, 'increase', WORKQUEUE.adds, [], at, at - (times[0] as number)).samples[0]?.value,
    ).toBe(40);
  });

  it('counts a counter reset across a target restart as Prometheus does', async () => {
    const port = await freePort();
    // Two lives of one process: the adds counter goes 0, 10, 20, 30, then restarts at 0, 10, 20.
    const life = (values: number[]) => {
      let i = 0;
      return (_req: http.IncomingMessage, res: http.ServerResponse) => {
        const adds = values[Math.min(i++, values.length - 1)] as number;
        res.writeHead(200, { 'content-type': TEXT_CT });
        res.end(queuePage({ depth: 0, adds }));
      };
    };
    const clock = new ManualClock();
    const t0 = clock.t;
    const src = scrapeSource({ targets: staticTargets([`http://127.0.0.1:${port}/metrics`]), clock });
    const first = await serveOnPort(port, life([0, 10, 20, 30]));
    for (let i = 0; i < 4; i++) {
      clock.t = t0 + i * INTERVAL;
      await src.scrapeOnce();
    }
    await first.close();
    // Down while restarting: the scrape at 60 s fails and marks the series stale.
    clock.t = t0 + 4 * INTERVAL;
    await src.scrapeOnce();
    expect(src.health()[0]?.lastError?.code).toBe('connection');
    await serveOnPort(port, life([0, 10, 20]));
    for (let i = 5; i < 8; i++) {
      clock.t = t0 + i * INTERVAL;
      await src.scrapeOnce();
    }
    expect(src.health()[0]).toMatchObject({ up: true, consecutiveFailures: 0 });
    const [view] = src.history.select({ metric: WORKQUEUE.adds });
    expect([...(view?.v ?? [])]).toEqual([0, 10, 20, 30, 0, 10, 20]);
    expect([...(view?.t ?? [])].map((t) => (t - t0) / 1000)).toEqual([0, 15, 30, 45, 75, 90, 105]);

    const at = t0 + 105_000;
    const value = (fn: 'rate' | 'increase', windowS: number): number | undefined =>
      rangeOver(src.history, fn, WORKQUEUE.adds, [], at, windowS * 1000).samples[0]?.value;
    // [0 s, 105 s]: 20 - 0, plus 30 lost at the reset = 50 over the 105 s sampled; no extrapolation.
    expect(value('increase', 105)).toBeCloseTo(50, 12);
    expect(value('rate', 105)).toBeCloseTo(50 / 105, 15);
    // [45 s, 105 s]: 30 -> 0 -> 10 -> 20: 20 - 30 + 30 = 20 over 60 s.
    expect(value('increase', 60)).toBeCloseTo(20, 12);
    expect(value('rate', 60)).toBeCloseTo(1 / 3, 15);
    // [35 s, 105 s]: the same samples; the start is 10 s from the first sample, under 1.1 × the 20 s average
    // spacing, so the increase is extrapolated to it: 20 × 70 / 60. (Extrapolating to zero would need
    // 60 × 30 / 20 = 90 s, longer than 10 s, so it does not cut in.)
    expect(value('increase', 70)).toBeCloseTo((20 * 70) / 60, 12);
    expect(value('rate', 70)).toBeCloseTo((20 * 70) / 60 / 70, 15);
    // Without the reset correction the increase over [0 s, 105 s] would have been 20.
    expect(value('increase', 105)).not.toBeCloseTo(20, 3);
  });

  it('refuses a scrape time that is not after the previous one (clock went backwards) and keeps the data', async () => {
    const s = await servePage(() => queuePage({ depth: 2, adds: 5 }));
    const clock = new ManualClock();
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock });
    await src.scrapeOnce();
    clock.advance(-1_000);
    await src.scrapeOnce();
    expect(src.health()[0]).toMatchObject({ up: false, lastError: { code: 'out_of_order' } });
    expect(src.health()[0]?.lastError?.message).toContain('did the clock go backwards?');
    // Not fetched, nothing marked stale.
    expect(s.requests()).toBe(1);
    expect(src.history.instant(WORKQUEUE.depth, [], clock.t + 1_000).map((x) => x.value)).toEqual([2]);
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    expect(src.health()[0]).toMatchObject({ up: true, lastError: null });
  });
});
