/**
 * The demo's source of metrics: built-in reference controllers (a simulator scenario) live on loopback,
 * with a history that already covers the rule windows.
 *
 * The scenario first runs on virtual time over the last `warmUpMs`; every warm-up scrape is parsed and
 * appended to the history exactly as a live scrape would be (same target id and labels, same series
 * keys), and the same simulated process then keeps running on the real clock for the live scrapes. So
 * the first evaluation already sees half an hour of data and the live data continues it without a
 * counter reset. Loaded only in demo mode (the simulator is not needed otherwise).
 */
import { staticTargets } from '../discovery/static.js';
import type { Target } from '../discovery/target.js';
import { keepFamilies, parseExposition } from '../exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../metrics/names.js';
import type { GroundTruth } from '../simulate/model.js';
import { startWarmLiveSimulation } from '../simulate/warm-live.js';
import { scrapeLabels } from '../sources/target-provider.js';
import type { History } from '../store/history.js';

export const DEMO_JOB = 'workqueue-doctor-demo';

export interface DemoTarget {
  /** The live simulated controllers' `/metrics`, as a static target. */
  readonly target: Target;
  readonly truth: GroundTruth;
  /** Scrapes loaded into the history. */
  readonly warmUpScrapes: number;
  stop(): Promise<void>;
}

export type DemoOptions = {
  readonly scenario: string;
  /** Receives the warm-up; the scrape source must then be created over it. */
  readonly history: History;
  readonly scrapeIntervalMs: number;
  /** Default: the history's retention (so the warm-up fills it). */
  readonly warmUpMs?: number;
  /** Default `127.0.0.1:0`. */
  readonly listen?: string;
};

export async function startDemoTarget(options: DemoOptions): Promise<DemoTarget> {
  const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
  let target: Target | undefined;
  let scrapes = 0;
  const sim = await startWarmLiveSimulation({
    scenario: options.scenario,
    warmUpMs: options.warmUpMs ?? options.history.retentionMs,
    listen: options.listen ?? '127.0.0.1:0',
    job: DEMO_JOB,
    scrapeIntervalMs: options.scrapeIntervalMs,
    onWarmUpScrape: ({ timeMs, text, url }) => {
      target ??= demoTarget(url);
      const page = parseExposition(text, { format: 'prometheus-text', keep, source: url });
      // The scrape source stores a target under its key with `scrapeLabels`: the same id and labels here
      // make the warm-up and the live scrapes one history.
      options.history.append({ id: target.key, labels: scrapeLabels(target) }, page, timeMs);
      scrapes++;
    },
  });
  return { target: target ?? demoTarget(sim.url), truth: sim.truth, warmUpScrapes: scrapes, stop: sim.stop };
}

function demoTarget(url: string): Target {
  const [target] = staticTargets([url], { job: DEMO_JOB });
  if (target === undefined) throw new Error(`no target for ${url}`);
  return target;
}
