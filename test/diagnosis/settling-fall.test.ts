/**
 * A fall that ends above zero is told from a list draining by its adds alone. Both are deduplicating queues with
 * every worker busy whose adds are arrivals × (1 − depth / objects): an overload knocked off its balance by a relist
 * falls back to it as a list falls, at most of the throughput, and only the adds, rising to meet the completions
 * above zero, say it never empties. Noise-free shapes of both physics, from the same relist of 9,000 objects, and of
 * 50,000 objects, whose fall is too slow for the trend window's rise to stand above the adds' counting noise.
 */
import { describe, expect, it } from 'vitest';
import { projectedBalance } from '../../src/diagnosis/capacity.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { QueueReport, Report } from '../../src/diagnosis/report.js';
import type { SignalSnapshot } from '../../src/diagnosis/rule.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { queueSeries, type SeriesSpec, seriesRecording, timeMs } from '../support/series-recording.js';

const TARGET = { job: 'ctrl', instance: 'a:8080' };
const OBJECTS = 9000;
const COMPLETIONS = 6;
const RELIST = 10 * 60;
/** Seventeen minutes after the relist: both still fall faster than a fifth of the throughput. */
const AT = RELIST + 17 * 60;

/**
 * A relist of every one of `objects` at `RELIST` over a queue with events at `arrivals` a second, its depth `before`
 * until then (the balance of an overload, or zero for a queue keeping up), then following dD/dt = arrivals × (1 − D
 * / objects) − completions: D(t) = balance + (objects − balance) · e^(−t/τ), τ = objects / arrivals.
 */
function relisted(name: string, arrivals: number, before: number, objects = OBJECTS): SeriesSpec[] {
  const balance = objects * (1 - COMPLETIONS / arrivals);
  const tau = objects / arrivals;
  const since = (t: number) => Math.max(0, t - RELIST);
  const depth = (t: number) => (t < RELIST ? before : balance + (objects - balance) * Math.exp(-since(t) / tau));
  // ∫ depth over the fall, for the adds: arrivals × ∫ (1 − depth / objects).
  const depthIntegral = (t: number) => balance * since(t) + (objects - balance) * tau * (1 - Math.exp(-since(t) / tau));
  const rateBefore = before > 0 ? COMPLETIONS : arrivals;
  const adds = (t: number) =>
    t < RELIST
      ? rateBefore * t
      : rateBefore * RELIST + (objects - before) + arrivals * since(t) - (arrivals / objects) * depthIntegral(t);
  const completions = (t: number) => (t < RELIST ? rateBefore * t : rateBefore * RELIST + COMPLETIONS * since(t));
  return queueSeries({ ...TARGET, controller: name, name }, { depth, adds, completions, syncSeconds: 0.6 });
}

async function diagnoseAt(series: readonly SeriesSpec[], at = AT): Promise<Report> {
  const source = recordingSourceFromText(seriesRecording({ series, durationSec: at }), 'fall.om');
  return diagnose(source.backend, {
    atMs: timeMs(at),
    runbookBaseUrl: 'https://runbooks.example',
    targets: source.targets(),
  });
}

function queue(report: Report, name: string): QueueReport {
  const found = report.queues.find((q) => q.queue.name === name);
  if (found === undefined) throw new Error(`no queue ${name}`);
  return found;
}

function snapshot(q: QueueReport): SignalSnapshot {
  return q.signals as unknown as SignalSnapshot;
}

describe('a fall that ends above zero', () => {
  it('is an overload falling back to its balance, not a list draining, and projects that balance', async () => {
    // Twice the completions over 9,000 objects: a balance of 4,500 keys, a time constant of 12.5 minutes.
    const report = await diagnoseAt([...relisted('overload', 12, 4500), ...relisted('list', 3, 0)]);
    const overload = queue(report, 'overload');
    const list = queue(report, 'list');
    for (const q of [overload, list]) {
      // Both fall faster than the drain share of the completions, over the trend window and over five minutes.
      expect(q.signals.depthSlope?.value).toBeLessThan(-0.2 * COMPLETIONS);
      expect(q.signals.recentDepthSlope?.value).toBeLessThan(-0.2 * COMPLETIONS);
      // Both see their adds rise: fewer waiting keys coalesce fewer events.
      expect(q.signals.addRate?.value).toBeGreaterThan(q.signals.trendAddRate?.value ?? Number.POSITIVE_INFINITY);
    }
    expect(overload.observations.map((o) => o.id)).not.toContain('ListDraining');
    expect(list.observations.map((o) => o.id)).toContain('ListDraining');
    const balance = projectedBalance(snapshot(overload)).value;
    expect(balance).toBeGreaterThan(4500 * 0.9);
    expect(balance).toBeLessThan(4500 * 1.1);
    // The list's adds meet the completions only below zero: it empties first.
    expect(projectedBalance(snapshot(list)).value).toBeLessThan(0);
  });

  it('is read over the half hour where the fall is too slow for the trend window to tell it from counting noise', async () => {
    // Twice the completions over 50,000 objects: a balance of 25,000 keys, a time constant of 69 minutes. A list of
    // as many objects, its events at half the completions, falls as fast and empties.
    const objects = 50_000;
    const at = RELIST + 100 * 60;
    const report = await diagnoseAt(
      [...relisted('overload', 12, 25_000, objects), ...relisted('list', 3, 0, objects)],
      at,
    );
    const overload = queue(report, 'overload');
    const list = queue(report, 'list');
    const value = (q: QueueReport, id: string): number => {
      const v = q.signals[id]?.value;
      if (typeof v !== 'number') throw new Error(`${q.queue.name}: no ${id}`);
      return v;
    };
    for (const q of [overload, list]) expect(value(q, 'depthSlope')).toBeLessThan(-0.2 * COMPLETIONS);
    // The adds are counts: the last five minutes' rate less a longer window's that holds it strays by the square
    // root of adds × (1/300 − 1/window), 1/600 against ten minutes and 1/360 against the half hour.
    const adds = value(overload, 'addRate');
    const trendRise = adds - value(overload, 'trendAddRate');
    const halfHourRise = adds - value(overload, 'balanceAddRate');
    expect(trendRise).toBeGreaterThan(0);
    expect(trendRise).toBeLessThan(2 * Math.sqrt(adds / 600));
    expect(halfHourRise).toBeGreaterThan(2 * Math.sqrt(adds / 360));
    // The half hour projects the balance: the adds are a line in the depth, so their means over two windows are the
    // same line in the two mean depths, whatever the shape of the fall between them.
    const { trendAddRate: _unused, ...withoutTrend } = snapshot(overload);
    const balance = projectedBalance(withoutTrend).value;
    expect(balance).toBeGreaterThan(25_000 * 0.95);
    expect(balance).toBeLessThan(25_000 * 1.05);
    expect(overload.observations.map((o) => o.id)).not.toContain('ListDraining');
    expect(list.observations.map((o) => o.id)).toContain('ListDraining');
  });
});
