/**
 * `startWarmLiveSimulation`: the warm-up scrapes on virtual time, then the same process live on the real
 * clock: counters continue from the warm-up (no reset) and keep moving; `stop()` closes everything.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { startWarmLiveSimulation, type WarmLiveSimulation, type WarmUpScrape } from '../../src/simulate/index.js';

let sim: WarmLiveSimulation | undefined;
afterEach(async () => {
  await sim?.stop();
  sim = undefined;
});

function addsIn(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${WORKQUEUE.adds}{`) && l.includes(`name="${name}"`));
  if (line === undefined) throw new Error(`no ${WORKQUEUE.adds} for ${name}`);
  return Number(line.split(' ').at(-1));
}

describe('startWarmLiveSimulation', () => {
  it('hands over every warm-up scrape in time order, then serves the same process live', async () => {
    const scrapes: WarmUpScrape[] = [];
    const before = Date.now();
    sim = await startWarmLiveSimulation({
      scenario: 'hot-loop-status-write',
      warmUpMs: 2 * 60_000,
      listen: '127.0.0.1:0',
      job: 'demo',
      onWarmUpScrape: (scrape) => {
        scrapes.push(scrape);
      },
    });
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(sim.instance).toBe(new URL(sim.url).host);
    expect(sim.job).toBe('demo');
    expect(sim.truth.queues[0]?.expected).toEqual(['WorkqueueHotLoop']);

    expect(scrapes).toHaveLength(9);
    expect(scrapes.every((s) => s.url === sim?.url)).toBe(true);
    const times = scrapes.map((s) => s.timeMs);
    // 15 s apart, each scrape off the grid by the background's jitter (±1 s), the last not after now.
    for (const [k, t] of times.entries()) expect(Math.abs(t - (times[0]! + k * 15_000))).toBeLessThanOrEqual(2_000);
    expect(times.slice(1).every((t, i) => t > times[i]!)).toBe(true);
    expect(times.at(-1)).toBeLessThanOrEqual(Date.now());
    expect(times[0]).toBeGreaterThanOrEqual(before - 2 * 60_000);
    expect(sim.warmUpEndMs).toBe(times.at(-1));
    expect(sim.recording.scrapeCount).toBe(9);
    expect(sim.recording.text()).toContain('job="demo"');

    const lastWarm = addsIn(scrapes.at(-1)?.text ?? '', 'ingress-status');
    expect(lastWarm).toBeGreaterThan(100);
    const url = sim.url;
    const live = addsIn(await (await fetch(url)).text(), 'ingress-status');
    expect(live).toBeGreaterThanOrEqual(lastWarm);
    let later = live;
    for (let i = 0; i < 200 && later <= live; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      later = addsIn(await (await fetch(url)).text(), 'ingress-status');
    }
    expect(later).toBeGreaterThan(live);

    await sim.stop();
    sim = undefined;
    await expect(fetch(url)).rejects.toThrow();
  });

  it('rejects a warm-up shorter than one scrape interval', async () => {
    await expect(startWarmLiveSimulation({ scenario: 'healthy', warmUpMs: 1000 })).rejects.toThrow(
      /warm-up must be at least/,
    );
  });
});
