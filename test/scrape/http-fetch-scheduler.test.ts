import type http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fetchMetricsPage } from '../../src/scrape/http-fetch.js';
import { createHttpAgents, type HttpAgents } from '../../src/scrape/http-transport.js';
import { createScrapeScheduler } from '../../src/scrape/scrape-scheduler.js';
import {
  newTargetHealth,
  recordScrapeSamples,
  recordScrapeSuccess,
  recordSkippedScrape,
} from '../../src/scrape/target-health.js';
import { type LocalServer, startHttpServer, waitFor } from '../support/local-server.js';

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: Error): void;
}
function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('createScrapeScheduler', () => {
  it('runs at most `concurrency` scrapes at once and all of them eventually', async () => {
    const scheduler = createScrapeScheduler({ concurrency: 2 });
    const gates = new Map<string, Deferred>();
    let running = 0;
    let maxRunning = 0;
    const started: string[] = [];
    const runs = ['a', 'b', 'c', 'd', 'e'].map((key) => {
      const gate = deferred();
      gates.set(key, gate);
      return scheduler.run(key, async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        started.push(key);
        await gate.promise;
        running--;
        return key.toUpperCase();
      });
    });
    await waitFor('two scrapes to start', () => started.length === 2);
    expect(started).toEqual(['a', 'b']);
    expect(scheduler.stats()).toEqual({ concurrency: 2, running: 2, waiting: 3, skipped: 0 });
    gates.get('b')?.resolve();
    await waitFor('c to start', () => started.includes('c'));
    expect(started).toEqual(['a', 'b', 'c']); // FIFO
    for (const g of gates.values()) g.resolve();
    const results = await Promise.all(runs);
    expect(results).toEqual(['A', 'B', 'C', 'D', 'E'].map((value) => ({ ran: true, value })));
    expect(maxRunning).toBe(2);
    expect(scheduler.stats()).toEqual({ concurrency: 2, running: 0, waiting: 0, skipped: 0 });
    await scheduler.idle();
  });

  it('skips and counts a run for a target whose previous scrape is still running or waiting', async () => {
    const scheduler = createScrapeScheduler({ concurrency: 1 });
    const gateX = deferred();
    const first = scheduler.run('x', async () => {
      await gateX.promise;
      return 1;
    });
    // 'y' waits for the only slot; it is busy too
    const gateY = deferred();
    const waitingY = scheduler.run('y', async () => {
      await gateY.promise;
      return 2;
    });
    await waitFor('x to hold the slot', () => scheduler.stats().running === 1 && scheduler.stats().waiting === 1);
    expect(scheduler.busy('x')).toBe(true);
    expect(scheduler.busy('y')).toBe(true);
    expect(await scheduler.run('x', async () => 99)).toEqual({ ran: false, reason: 'overlap' });
    expect(await scheduler.run('x', async () => 99)).toEqual({ ran: false, reason: 'overlap' });
    expect(await scheduler.run('y', async () => 99)).toEqual({ ran: false, reason: 'overlap' });
    expect(scheduler.skipped('x')).toBe(2);
    expect(scheduler.skipped('y')).toBe(1);
    expect(scheduler.skipped()).toBe(3);
    gateX.resolve();
    expect(await first).toEqual({ ran: true, value: 1 });
    expect(scheduler.busy('x')).toBe(false);
    // the next tick for x runs again (queued behind y)
    const again = scheduler.run('x', async () => 3);
    gateY.resolve();
    expect(await waitingY).toEqual({ ran: true, value: 2 });
    expect(await again).toEqual({ ran: true, value: 3 });
    await scheduler.idle();
    expect(scheduler.stats()).toEqual({ concurrency: 1, running: 0, waiting: 0, skipped: 3 });
  });

  it('releases the slot and the target when the scrape fails', async () => {
    const scheduler = createScrapeScheduler({ concurrency: 1 });
    await expect(
      scheduler.run('x', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(scheduler.busy('x')).toBe(false);
    expect(await scheduler.run('x', async () => 'ok')).toEqual({ ran: true, value: 'ok' });
  });

  it('rejects a bad concurrency', () => {
    expect(() => createScrapeScheduler({ concurrency: 0 })).toThrow(RangeError);
    expect(() => createScrapeScheduler({ concurrency: 1.5 })).toThrow(RangeError);
  });
});

describe('scheduler with real scrapes', () => {
  let server: LocalServer;
  let agents: HttpAgents;
  let inFlight = 0;
  let maxInFlight = 0;
  const pending: http.ServerResponse[] = [];

  beforeAll(async () => {
    agents = createHttpAgents();
    server = await startHttpServer((_req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on('close', () => {
        inFlight--;
      });
      pending.push(res);
    });
  });
  afterEach(() => {
    for (const res of pending.splice(0)) res.destroy();
  });
  afterAll(async () => {
    agents.http.destroy();
    await server.close();
  });

  it('bounds the scrapes a server sees at once, and skips a target still being scraped', async () => {
    const scheduler = createScrapeScheduler({ concurrency: 3 });
    const keys = ['t0', 't1', 't2', 't3', 't4', 't5'];
    const health = new Map(keys.map((k) => [k, newTargetHealth(k, `${server.origin}/metrics?target=${k}`)]));
    const tick = () =>
      keys.map((key) =>
        scheduler
          .run(key, () =>
            fetchMetricsPage({ url: health.get(key)!.url }, { timeoutMs: 10_000, maxBytes: 1 << 20, agents }),
          )
          .then((r) => {
            const h = health.get(key)!;
            if (r.ran) {
              health.set(
                key,
                recordScrapeSamples(
                  recordScrapeSuccess(h, { at: 1, durationMs: r.value.durationMs, bytes: r.value.bytes }),
                  1,
                ),
              );
            } else {
              health.set(key, recordSkippedScrape(h));
            }
          }),
      );
    const firstTick = tick();
    await waitFor('three scrapes in flight', () => pending.length === 3);
    // a second tick while the first is still running: every target is busy, nothing new starts
    await Promise.all(tick());
    expect(scheduler.skipped()).toBe(6);
    expect([...health.values()].every((h) => h.skippedScrapes === 1)).toBe(true);
    // answer the scrapes one by one; the waiting ones start as slots free up
    let answered = 0;
    while (answered < keys.length) {
      await waitFor('a scrape to answer', () => pending.length > 0);
      const res = pending.shift()!;
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end('up 1\n');
      answered++;
    }
    await Promise.all(firstTick);
    expect(maxInFlight).toBe(3);
    expect([...health.values()].every((h) => h.up && h.samples === 1 && h.bytes === 5)).toBe(true);
  });
});
