import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { PodDiscovery } from '../../src/discovery/kubernetes.js';
import { staticTargets } from '../../src/discovery/static.js';
import type { Target } from '../../src/discovery/target.js';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { createStoreBackend, historyStore } from '../../src/promql/history-backend.js';
import { ENGINE_QUEUE_KEYING } from '../../src/service/queue-keying.js';
import { createScrapeSource, type ScrapeEvent } from '../../src/sources/scrape-source.js';
import type { TargetProvider } from '../../src/sources/target-provider.js';
import { History } from '../../src/store/history.js';
import { waitFor } from '../support/local-server.js';
import { FIXTURES, ManualClock, queuePage, scrapeSource, serve, servePage, TEXT_CT } from './scrape-support.js';

const INTERVAL = 15_000;

/** A provider like the pod discovery: a list the test replaces, with change events. */
function fakeDiscovery(initial: Target[]) {
  let list = initial;
  const listeners = new Set<(targets: Target[]) => void>();
  return {
    targets: () => list,
    on(_event: 'change', cb: (targets: Target[]) => void) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    set(next: Target[]) {
      list = next;
      for (const cb of listeners) cb(next);
    },
    listeners: () => listeners.size,
  };
}

describe('createScrapeSource options', () => {
  it('defaults the timeout to min(10 s, 0.8 × interval) and rejects a timeout not below the interval', async () => {
    const a = createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, targets: [] });
    expect([a.kind, a.intervalMs, a.timeoutMs]).toEqual(['scrape', 15_000, 10_000]);
    const b = createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, targets: [], intervalMs: 5_000 });
    expect(b.timeoutMs).toBe(4_000);
    await Promise.all([a.close(), b.close()]);
    expect(() =>
      createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, targets: [], intervalMs: 5_000, timeoutMs: 5_000 }),
    ).toThrow(/timeout \(5000 ms\) must be below the scrape interval \(5000 ms\)/);
    expect(() => createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, targets: [], intervalMs: 0 })).toThrow(
      RangeError,
    );
    expect(() => createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, targets: [], maxBytes: -1 })).toThrow(
      RangeError,
    );
    expect(() => createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, targets: [], concurrency: 0 })).toThrow(
      RangeError,
    );
  });

  it('accepts the pod discovery as a target provider', () => {
    // A compile-time check: the discovery fits the provider interface as it is.
    const asProvider = (d: PodDiscovery): TargetProvider => d;
    expect(typeof asProvider).toBe('function');
  });
});

describe('scrape source: one scrape', () => {
  it('stores the page under the target labels, keeping clashing scraped labels as exported_*', async () => {
    const page = [
      `# TYPE ${WORKQUEUE.depth} gauge`,
      `${WORKQUEUE.depth}{controller="c",job="scraped-job",instance="scraped",name="q",priority="high"} 3`,
      `${WORKQUEUE.depth}{controller="c",job="scraped-job",instance="scraped",name="q",priority="low"} 4`,
      '',
    ].join('\n');
    const s = await servePage(() => page);
    const clock = new ManualClock();
    const events: ScrapeEvent[] = [];
    const src = scrapeSource({
      targets: staticTargets([`${s.origin}/metrics`], { job: 'ctrl' }),
      clock,
      onScrape: (e) => events.push(e),
    });
    await src.scrapeOnce();
    const instance = `127.0.0.1:${s.port}`;
    const got = src.history.instant(WORKQUEUE.depth, [], clock.t).map((x) => ({ ...x.labels, value: x.value }));
    expect(got).toEqual([
      {
        __name__: WORKQUEUE.depth,
        controller: 'c',
        exported_instance: 'scraped',
        exported_job: 'scraped-job',
        instance,
        job: 'ctrl',
        name: 'q',
        priority: 'high',
        value: 3,
      },
      {
        __name__: WORKQUEUE.depth,
        controller: 'c',
        exported_instance: 'scraped',
        exported_job: 'scraped-job',
        instance,
        job: 'ctrl',
        name: 'q',
        priority: 'low',
        value: 4,
      },
    ]);
    const [health] = src.health();
    expect(health).toMatchObject({
      key: `${s.origin}/metrics`,
      url: `${s.origin}/metrics`,
      up: true,
      lastError: null,
      lastScrapeAt: clock.t,
      samples: 2,
      bytes: Buffer.byteLength(page),
      consecutiveFailures: 0,
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ ok: true, samples: 2, bytes: Buffer.byteLength(page) });
    expect(events[0]?.target.labels).toEqual({ job: 'ctrl', instance });
    expect(events[0]?.errorCode).toBeUndefined();
    expect(src.targets()).toEqual([{ name: `ctrl/${instance}`, labels: { instance, job: 'ctrl' } }]);
    expect(src.dataRange()).toEqual({ startMs: clock.t, endMs: clock.t, keptMs: 30 * 60_000 });
  });

  it('fills in job and instance for a hand-made target without them', async () => {
    const s = await servePage(() => queuePage({ depth: 1, adds: 1 }));
    const clock = new ManualClock();
    const src = scrapeSource({ targets: [{ key: 'k', url: `${s.origin}/metrics`, labels: { team: 'a' } }], clock });
    await src.scrapeOnce();
    const [sample] = src.history.instant(WORKQUEUE.depth, [], clock.t);
    expect(sample?.labels).toMatchObject({ job: 'static', instance: `127.0.0.1:${s.port}`, team: 'a' });
  });

  it('keeps only the diagnostic families, without reading the others', async () => {
    // The malformed go_goroutines line is in a family that is skipped without being tokenized.
    const page = `# TYPE go_goroutines gauge\ngo_goroutines{ 12\n${queuePage({ depth: 2, adds: 5 })}`;
    const s = await servePage(() => page);
    const clock = new ManualClock();
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock });
    await src.scrapeOnce();
    expect(src.health()[0]).toMatchObject({ up: true, samples: 2 });
    expect(src.history.metricNames()).toEqual([WORKQUEUE.adds, WORKQUEUE.depth]);
  });

  it('stores the controller-runtime fixture page with job and instance on every series', async () => {
    const fixture = readFileSync(`${FIXTURES}/controller-runtime-hotloop.prom`, 'utf8');
    const s = await servePage(() => fixture);
    const clock = new ManualClock();
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock });
    await src.scrapeOnce();
    const instance = `127.0.0.1:${s.port}`;
    const target = { job: 'static', instance };
    expect(src.history.metricNames()).toEqual(
      [
        WORKQUEUE.adds,
        WORKQUEUE.depth,
        WORKQUEUE.longestRunningProcessor,
        `${WORKQUEUE.queueDuration}_bucket`,
        `${WORKQUEUE.queueDuration}_count`,
        `${WORKQUEUE.queueDuration}_sum`,
        WORKQUEUE.retries,
        WORKQUEUE.unfinishedWork,
        `${WORKQUEUE.workDuration}_bucket`,
        `${WORKQUEUE.workDuration}_count`,
        `${WORKQUEUE.workDuration}_sum`,
      ].sort(),
    );
    const depth = src.history.instant(WORKQUEUE.depth, [], clock.t);
    // `priority=""` is an absent label.
    expect(depth.map((d) => [{ ...d.labels }, d.value])).toEqual([
      [{ __name__: WORKQUEUE.depth, controller: 'hotloop', name: 'hotloop', ...target }, 1],
    ]);
    const adds = src.history.instant(WORKQUEUE.adds, [], clock.t);
    expect(adds.map((d) => d.value)).toEqual([74584]);
    const buckets = src.history.instant(`${WORKQUEUE.workDuration}_bucket`, [], clock.t);
    expect(buckets).toHaveLength(13);
    for (const b of buckets) expect(b.labels).toMatchObject({ ...target, controller: 'hotloop', name: 'hotloop' });
    const inf = buckets.find((b) => b.labels['le'] === '+Inf');
    expect(inf?.value).toBe(74581);
    // 1 depth + 1 adds + 1 retries + 2 gauges + 2 × (13 buckets + sum + count)
    expect(src.health()[0]?.samples).toBe(35);
  });
});

describe('scrape source: fetch options', () => {
  it('sends the bearer token from the token file and survives a throwing onScrape hook', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scrape-source-'));
    try {
      const tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, 'sa-token\n');
      let authorization: string | undefined;
      const s = await serve((req, res) => {
        authorization = req.headers.authorization;
        res.writeHead(200, { 'content-type': TEXT_CT });
        res.end(queuePage({ depth: 1, adds: 1 }));
      });
      const src = scrapeSource({
        targets: staticTargets([`${s.origin}/metrics`]),
        clock: new ManualClock(),
        bearerTokenFile: tokenFile,
        onScrape: () => {
          throw new Error('hook failed');
        },
      });
      await src.scrapeOnce();
      expect(authorization).toBe('Bearer sa-token');
      expect(src.health()[0]).toMatchObject({ up: true, samples: 2 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('scrape source: diagnosis over scraped data', () => {
  it('gives the engine a report with the scraped queue and its depth', async () => {
    const fixture = readFileSync(`${FIXTURES}/controller-runtime-backlog.prom`, 'utf8');
    const s = await servePage(() => fixture);
    const clock = new ManualClock();
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock });
    for (let i = 0; i < 5; i++) {
      if (i > 0) clock.advance(INTERVAL);
      await src.scrapeOnce();
    }
    const range = src.dataRange();
    expect(range).toEqual({ startMs: clock.t - 4 * INTERVAL, endMs: clock.t, keptMs: 30 * 60_000 });
    const report = await diagnose(createStoreBackend(historyStore(src.history)), {
      atMs: clock.t,
      runbookBaseUrl: 'https://runbooks.invalid/',
      targets: src.targets(),
      historyStartMs: range?.startMs ?? clock.t,
    });
    const target = `static/127.0.0.1:${s.port}`;
    const queue = report.queues.find((q) => q.queue.name === 'backlog');
    expect(queue?.queue).toEqual({ target, name: 'backlog', controller: 'backlog' });
    expect(queue?.signals['depth']).toEqual({ value: 2157, unit: 'items' });
    expect(report.errors).toEqual([]);
    // The source's own backend is the same kind of view of the same history.
    const again = await diagnose(src.backend, { atMs: clock.t, runbookBaseUrl: 'https://runbooks.invalid/' });
    expect(again.queues.find((q) => q.queue.name === 'backlog')?.signals['depth']?.value).toBe(2157);
  });
});

describe('scrape source: targets that come and go', () => {
  it('marks a vanished target stale at once and removes it from the history after the grace period', async () => {
    const a = await servePage(() => queuePage({ depth: 1, adds: 10, name: 'a' }));
    const b = await servePage(() => queuePage({ depth: 2, adds: 20, name: 'b' }));
    const [ta] = staticTargets([`${a.origin}/metrics`]);
    const [tb] = staticTargets([`${b.origin}/metrics`]);
    if (ta === undefined || tb === undefined) throw new Error('two targets expected');
    const discovery = fakeDiscovery([ta, tb]);
    const clock = new ManualClock();
    const history = new History({ retentionMs: 10 * 60_000 });
    const src = scrapeSource({ targets: discovery, clock, history });
    expect(src.health().map((h) => [h.key, h.up, h.lastScrapeAt])).toEqual(
      [ta.key, tb.key].sort().map((key) => [key, false, null]),
    );
    await src.scrapeOnce();
    const scrapedAt = clock.t;
    clock.advance(5_000);
    discovery.set([ta]);
    // Gone from health and targets at once; its series are stale from now on, its samples still held.
    expect(src.health().map((h) => h.key)).toEqual([ta.key]);
    expect(src.targets().map((t) => t.name)).toEqual([`static/127.0.0.1:${a.port}`]);
    expect(src.history.instant(WORKQUEUE.depth, [], clock.t).map((s) => s.labels['name'])).toEqual(['a']);
    expect(src.history.instant(WORKQUEUE.depth, [], clock.t - 1).map((s) => s.labels['name'])).toEqual(['a', 'b']);
    expect(src.history.select({ metric: WORKQUEUE.depth, matchers: [{ label: 'name', op: '=', value: 'b' }] })).toEqual(
      [expect.objectContaining({ t: new Float64Array([scrapedAt]), v: new Float64Array([2]) })],
    );
    const requestsToB = b.requests();
    clock.advance(INTERVAL);
    await src.scrapeOnce();
    expect(b.requests()).toBe(requestsToB);
    expect(
      src.history
        .targets()
        .map((t) => t.id)
        .sort(),
    ).toEqual([ta.key, tb.key].sort());
    // After the grace period (the retention) the target is gone from the history.
    clock.t = scrapedAt + 5_000 + 10 * 60_000;
    await src.scrapeOnce();
    expect(src.history.targets().map((t) => t.id)).toEqual([ta.key]);
    expect(src.history.metricNames()).toEqual([WORKQUEUE.adds, WORKQUEUE.depth]);
    expect(src.history.select({ metric: WORKQUEUE.depth }).map((v) => v.labels['name'])).toEqual(['a']);
  });

  it('aborts the in-flight scrape of a target that vanishes and discards its result', async () => {
    let closed = 0;
    let requests = 0;
    const hanging = await serve((req) => {
      requests++;
      req.on('close', () => closed++);
    });
    const [t] = staticTargets([`${hanging.origin}/metrics`]);
    if (t === undefined) throw new Error('one target expected');
    const discovery = fakeDiscovery([t]);
    const clock = new ManualClock();
    const events: ScrapeEvent[] = [];
    const src = scrapeSource({
      targets: discovery,
      clock,
      intervalMs: 60_000,
      timeoutMs: 50_000,
      onScrape: (e) => events.push(e),
    });
    const round = src.scrapeOnce();
    await waitFor('the request to arrive', () => requests === 1);
    discovery.set([]);
    await round;
    await waitFor('the server to see the request go away', () => closed === 1);
    expect(events).toEqual([]);
    expect(src.health()).toEqual([]);
  });

  it('does not scrape a target that vanished while it waited for a free slot', async () => {
    const held: http.ServerResponse[] = [];
    const a = await serve((_req, res) => {
      held.push(res);
    });
    const b = await servePage(() => queuePage({ depth: 1, adds: 1 }));
    const [ta] = staticTargets([`${a.origin}/metrics`]);
    const [tb] = staticTargets([`${b.origin}/metrics`]);
    if (ta === undefined || tb === undefined) throw new Error('two targets expected');
    // Scrapes queue for slots in the provider's order: `a` takes the only slot, `b` waits.
    const discovery = fakeDiscovery([ta, tb]);
    const clock = new ManualClock();
    const src = scrapeSource({ targets: discovery, clock, concurrency: 1 });
    const round = src.scrapeOnce();
    await waitFor('the request to a', () => held.length === 1);
    discovery.set([ta]);
    clock.advance(1_000);
    const res = held[0] as http.ServerResponse;
    res.writeHead(200, { 'content-type': TEXT_CT });
    res.end(queuePage({ depth: 0, adds: 0 }));
    await round;
    expect(b.requests()).toBe(0);
    expect(src.health()).toEqual([expect.objectContaining({ key: ta.key, up: true })]);
  });

  it('starts a fresh history target when a target keeps its key but changes its labels', async () => {
    const s = await servePage(() => queuePage({ depth: 1, adds: 1 }));
    const url = `${s.origin}/metrics`;
    const discovery = fakeDiscovery([{ key: 'pod/ns/p:8080', url, labels: { job: 'j', instance: '10.0.0.1:8080' } }]);
    const clock = new ManualClock();
    const src = scrapeSource({ targets: discovery, clock });
    await src.scrapeOnce();
    clock.advance(INTERVAL);
    discovery.set([{ key: 'pod/ns/p:8080', url, labels: { job: 'j', instance: '10.0.0.2:8080' } }]);
    clock.advance(1);
    await src.scrapeOnce();
    expect(src.history.targets().map((t) => [t.id, t.labels['instance']])).toEqual([
      ['pod/ns/p:8080', '10.0.0.1:8080'],
      ['pod/ns/p:8080#2', '10.0.0.2:8080'],
    ]);
    expect(src.history.instant(WORKQUEUE.depth, [], clock.t).map((x) => x.labels['instance'])).toEqual([
      '10.0.0.2:8080',
    ]);
    expect(src.health()).toEqual([expect.objectContaining({ key: 'pod/ns/p:8080', up: true })]);
    expect(src.targets()).toEqual([{ name: 'j/10.0.0.2:8080', labels: { instance: '10.0.0.2:8080', job: 'j' } }]);
  });
});

describe('scrape source: scheduling and lifecycle', () => {
  it('never runs two scrapes of one target at once: a round that finds it busy skips it', async () => {
    const held: http.ServerResponse[] = [];
    const s = await serve((_req, res) => {
      held.push(res);
    });
    const clock = new ManualClock();
    const src = scrapeSource({ targets: staticTargets([`${s.origin}/metrics`]), clock });
    const first = src.scrapeOnce();
    const second = src.scrapeOnce();
    await second;
    expect(src.health()[0]?.skippedScrapes).toBe(1);
    await waitFor('the request to arrive', () => held.length === 1);
    const res = held[0] as http.ServerResponse;
    res.writeHead(200, { 'content-type': TEXT_CT });
    res.end(queuePage({ depth: 1, adds: 1 }));
    await first;
    expect(held).toHaveLength(1);
    expect(src.health()[0]).toMatchObject({ up: true, skippedScrapes: 1 });
  });

  it('runs at most `concurrency` scrapes at once', async () => {
    let active = 0;
    let maxActive = 0;
    const held: http.ServerResponse[] = [];
    const handler: http.RequestListener = (_req, res) => {
      active++;
      maxActive = Math.max(maxActive, active);
      held.push(res);
    };
    const servers = await Promise.all([serve(handler), serve(handler), serve(handler), serve(handler)]);
    const clock = new ManualClock();
    const src = scrapeSource({
      targets: staticTargets(servers.map((s) => `${s.origin}/metrics`)),
      clock,
      concurrency: 2,
    });
    const round = src.scrapeOnce();
    let answered = 0;
    while (answered < 4) {
      await waitFor('a held request', () => held.length > answered);
      const res = held[answered] as http.ServerResponse;
      answered++;
      active--;
      res.writeHead(200, { 'content-type': TEXT_CT });
      res.end(queuePage({ depth: 0, adds: answered }));
    }
    await round;
    expect(maxActive).toBe(2);
    expect(src.health().every((h) => h.up)).toBe(true);
  });

  it('start() scrapes at once and then on the interval; stop() ends it and aborts a scrape in flight', async () => {
    const ok = await servePage(() => queuePage({ depth: 1, adds: 1 }));
    let hangingRequests = 0;
    let hangingClosed = 0;
    const hanging = await serve((req) => {
      hangingRequests++;
      req.on('close', () => hangingClosed++);
    });
    const src = scrapeSource({
      targets: staticTargets([`${ok.origin}/metrics`, `${hanging.origin}/metrics`]),
      intervalMs: 100,
      timeoutMs: 90,
    });
    src.start();
    src.start(); // idempotent
    await waitFor('three scrapes of the healthy target', () => ok.requests() >= 3);
    // The hanging target times out on every round instead of piling up.
    const hangingHealth = () => src.health().find((h) => h.key === `${hanging.origin}/metrics`);
    await waitFor('a timeout on the hanging target', () => hangingHealth()?.lastError?.code === 'timeout');
    await waitFor('a scrape of the hanging target in flight', () => hangingRequests > hangingClosed);
    await src.stop();
    await waitFor('every hanging request to be closed', () => hangingClosed === hangingRequests);
    const after = ok.requests();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(ok.requests()).toBe(after);
    // Scraping can be started again after stop().
    src.start();
    await waitFor('a scrape after the restart', () => ok.requests() > after);
    await src.stop();
  });

  it('close() is final and idempotent and stops following the provider', async () => {
    const s = await servePage(() => queuePage({ depth: 1, adds: 1 }));
    const [t] = staticTargets([`${s.origin}/metrics`]);
    if (t === undefined) throw new Error('one target expected');
    const discovery = fakeDiscovery([t]);
    const src = createScrapeSource({ queueKeying: ENGINE_QUEUE_KEYING, targets: discovery, clock: new ManualClock() });
    expect(discovery.listeners()).toBe(1);
    await src.scrapeOnce();
    await src.close();
    await src.close();
    expect(discovery.listeners()).toBe(0);
    await src.scrapeOnce();
    expect(s.requests()).toBe(1);
    expect(() => src.start()).toThrow(/closed/);
  });
});
