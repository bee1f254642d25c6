/**
 * What the history holds over time stays within its held limits: a target's stale series are evicted oldest first to
 * make room, queues before series; a page that would not fit even then is refused whole; other targets lose nothing.
 */
import { describe, expect, it } from 'vitest';
import { keepFamilies, parseExposition } from '../../src/exposition/parser.js';
import { CLIENT_GO, DIAGNOSTIC_FAMILIES, WORKQUEUE } from '../../src/metrics/names.js';
import { ENGINE_QUEUE_KEYING } from '../../src/service/queue-keying.js';
import { HeldLimitError, type HeldLimits, History } from '../../src/store/history.js';
import { collidingKeys } from '../support/colliding-keys.js';

const T0 = Date.UTC(2025, 0, 1);
const STEP = 15_000;
const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
const A = { id: 'a', labels: { job: 'a', instance: 'a:8080' } };
const B = { id: 'b', labels: { job: 'b', instance: 'b:8080' } };

function limits(bounds: Partial<Omit<HeldLimits, 'queues'>>): HeldLimits {
  return {
    maxSeries: Number.POSITIVE_INFINITY,
    maxQueues: Number.POSITIVE_INFINITY,
    maxTotalSeries: Number.POSITIVE_INFINITY,
    maxTotalQueues: Number.POSITIVE_INFINITY,
    ...bounds,
    queues: ENGINE_QUEUE_KEYING,
  };
}

/** REST client series, one per path. */
function requests(paths: readonly string[], value = 1) {
  const lines = [`# TYPE ${CLIENT_GO.restClientRequests} counter`];
  for (const path of paths) lines.push(`${CLIENT_GO.restClientRequests}{code="200",path="${path}"} ${value}`);
  return parseExposition(`${lines.join('\n')}\n`, { keep });
}

/** Depth and adds of each named queue. */
function queues(names: readonly string[], value = 1) {
  const lines = [`# TYPE ${WORKQUEUE.depth} gauge`];
  for (const name of names) lines.push(`${WORKQUEUE.depth}{name="${name}"} ${value}`);
  lines.push(`# TYPE ${WORKQUEUE.adds} counter`);
  for (const name of names) lines.push(`${WORKQUEUE.adds}{name="${name}"} ${value}`);
  return parseExposition(`${lines.join('\n')}\n`, { keep });
}

const paths = (round: number, count: number) => Array.from({ length: count }, (_, i) => `/r${round}/${i}`);
const heldPaths = (history: History, target = 'a') =>
  history
    .heldSeries(target, CLIENT_GO.restClientRequests)
    .map((s) => s.labels.path)
    .sort();
const heldQueueNames = (history: History, target = 'a') =>
  [...new Set(history.heldSeries(target, WORKQUEUE.adds).map((s) => s.labels.name))].sort();

describe('held limits', () => {
  it('keeps a target that brings new series at every scrape at its bound, its oldest stale series evicted first', () => {
    const history = new History();
    const held = limits({ maxSeries: 25 });
    for (let round = 0; round < 6; round++) {
      const report = history.append(A, requests([...paths(round, 10), '/stable']), T0 + round * STEP, { held });
      expect(history.targets()[0]?.series).toBeLessThanOrEqual(25);
      // Ten new series a scrape: the third brings the target to 31, so 6 stale series go, then 10 at each scrape.
      if (round < 2) expect(report.eviction).toBeUndefined();
      else expect(report.eviction).toEqual({ series: round === 2 ? 6 : 10, queues: 0, limits: ['maxSeries'] });
    }
    // The stable series and the newest stale ones stay; the stable series kept every sample.
    const kept = heldPaths(history);
    expect(kept).toContain('/stable');
    expect(kept.filter((p) => p?.startsWith('/r5/'))).toHaveLength(10);
    expect(kept.filter((p) => p?.startsWith('/r4/'))).toHaveLength(10);
    expect(kept.filter((p) => p?.startsWith('/r3/'))).toHaveLength(4);
    const stable = history.heldSeries('a', CLIENT_GO.restClientRequests).find((s) => s.labels.path === '/stable');
    expect(stable?.t).toHaveLength(6);
  });

  it('among stale series as old as each other, evicts those that came first, keys of the same hash included', () => {
    const history = new History();
    const held = limits({ maxSeries: 4 });
    // Three series come in this order, the first and the last with keys of the same hash, then leave together; the
    // page that replaces them needs room for two.
    const [x, y] = collidingKeys();
    history.append(A, parseExposition(`${x} 1\nm{a="z"} 1\n${y} 1\n`), T0, { held });
    const report = history.append(A, parseExposition('n{a="1"} 1\nn{a="2"} 1\nn{a="3"} 1\n'), T0 + STEP, { held });
    expect(report.eviction).toEqual({ series: 2, queues: 0, limits: ['maxSeries'] });
    expect(history.heldSeries('a', 'm').map((s) => s.key)).toEqual([y]);
  });

  it('evicts the same way in slices', async () => {
    const sync = new History();
    const sliced = new History();
    const held = limits({ maxSeries: 25 });
    for (let round = 0; round < 5; round++) {
      const page = requests([...paths(round, 10), '/stable']);
      const a = sync.append(A, page, T0 + round * STEP, { held });
      const b = await sliced.appendInChunks(A, page, T0 + round * STEP, { held, chunkSize: 3 });
      expect(b).toEqual(a);
    }
    expect(heldPaths(sliced)).toEqual(heldPaths(sync));
  });

  it('refuses a page whole when even every stale series evicted would not make room', () => {
    const history = new History();
    const held = limits({ maxSeries: 10 });
    history.append(A, requests(paths(0, 8)), T0, { held });
    const before = heldPaths(history);
    let refused: unknown;
    try {
      history.append(A, requests(paths(1, 11)), T0 + STEP, { held });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(HeldLimitError);
    expect(refused).toMatchObject({ code: 'held_series_limit', limit: 'maxSeries', bound: 10, wouldHold: 11 });
    // Nothing stored, nothing evicted, the scrape not logged.
    expect(heldPaths(history)).toEqual(before);
    expect(history.scrapes('a').times).toHaveLength(1);
    // The next page that fits is taken, at a later time.
    expect(history.append(A, requests(paths(2, 10)), T0 + 2 * STEP, { held }).eviction?.series).toBe(8);
  });

  it('holds at most maxQueues queues: the stale queues go, with their depth and adds', () => {
    const history = new History();
    const held = limits({ maxQueues: 3 });
    history.append(A, queues(['q1', 'q2']), T0, { held });
    const report = history.append(A, queues(['q3', 'q4']), T0 + STEP, { held });
    // Four queues with the page: the oldest stale one (the two are as old: the first found) goes.
    expect(report.eviction).toEqual({ series: 2, queues: 1, limits: ['maxQueues'] });
    expect(heldQueueNames(history)).toHaveLength(3);
    expect(history.heldSeries('a', WORKQUEUE.depth)).toHaveLength(3);
  });

  it('counts queues as the engine keys them: by every label but le, priority and quantile', () => {
    const history = new History();
    const held = limits({ maxQueues: 2 });
    const page = parseExposition(
      [
        `# TYPE ${WORKQUEUE.depth} gauge`,
        `${WORKQUEUE.depth}{name="q",priority="0"} 1`,
        `${WORKQUEUE.depth}{name="q",priority="-100"} 1`,
        `${WORKQUEUE.depth}{controller="c1",name="q"} 1`,
        `# TYPE ${WORKQUEUE.adds} counter`,
        `${WORKQUEUE.adds}{name="q"} 1`,
        '',
      ].join('\n'),
      { keep },
    );
    // `q` (two priorities, and its adds) and `q` of controller c1: two queues.
    expect(history.append(A, page, T0, { held }).eviction).toBeUndefined();
    expect(() => history.append(A, queues(['r', 's', 't']), T0 + STEP, { held })).toThrow(HeldLimitError);
  });

  it('never evicts another target: a page over the total is refused when its own target has nothing stale', () => {
    const history = new History();
    const held = limits({ maxTotalSeries: 15 });
    history.append(A, requests(paths(0, 10)), T0, { held });
    let refused: unknown;
    try {
      history.append(B, requests(paths(0, 8)), T0, { held });
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({ code: 'held_series_limit', limit: 'maxTotalSeries', bound: 15 });
    expect(heldPaths(history, 'a')).toHaveLength(10);
    // Within the total, the other target's own stale series make room for it.
    history.append(B, requests(paths(0, 5)), T0, { held });
    expect(history.append(B, requests(paths(1, 5)), T0 + STEP, { held }).eviction).toEqual({
      series: 5,
      queues: 0,
      limits: ['maxTotalSeries'],
    });
    expect(heldPaths(history, 'a')).toHaveLength(10);
    expect(history.stats().series).toBe(15);
  });

  it('tells an evaluation that kept results from the evicted samples that they changed', () => {
    const history = new History();
    const held = limits({ maxSeries: 10 });
    history.append(A, requests(paths(0, 10)), T0, { held });
    history.append(A, requests(paths(0, 10), 2), T0 + STEP, { held });
    const changes = history.changes();
    history.append(A, requests(paths(1, 10)), T0 + 2 * STEP, { held });
    expect(changes.takeEarliest()).toBe(T0);
  });
});
