/**
 * One hostile or failing target never harms a healthy one: each kind of `HOSTILE_KINDS` is scraped beside the
 * healthy target for several rounds with a controlled clock, and compared with the healthy target scraped alone at
 * the same times. The healthy target's history (every series, every sample, what an instant lookup finds at every
 * round) and the diagnosis of its queues (status, findings with their evidence, signals) must be identical; the
 * hostile target's health must say what went wrong, scrape by scrape (and what a held limit did to the scrapes it
 * stored); the hostile target never holds more series than the held series limit; the scrape source must never throw.
 */
import { describe, expect, it } from 'vitest';
import { staticTargets } from '../../src/discovery/static.js';
import type { Target } from '../../src/discovery/target.js';
import { keepFamilies, parseExposition } from '../../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../../src/metrics/names.js';
import { DEFAULT_SCRAPE_HELD_SERIES_LIMIT, DEFAULT_SCRAPE_MAX_BYTES } from '../../src/scrape/scrape-settings.js';
import { diagnoseSource } from '../../src/service/diagnose-source.js';
import { targetNameOf } from '../../src/service/target-status.js';
import type { ScrapeEvent, ScrapeSource, ScrapeSourceErrorCode } from '../../src/sources/scrape-source.js';
import type { History } from '../../src/store/history.js';
import {
  CARDINALITY_BOMB_SERIES,
  cardinalityBombPage,
  HEALTHY_QUEUES,
  HOSTILE_KINDS,
  healthyTargetHandler,
} from '../support/hostile-targets.js';
import { ManualClock, scrapeSource, serve } from './scrape-support.js';

const INTERVAL_MS = 15_000;
/** Real time: ends the trickle each round; generous for the healthy target on a busy machine. */
const TIMEOUT_MS = 3_000;
/** Enough for the healthy target's backlog, hot loop, failures and slow work to be found. */
const ROUNDS = 4;
const RUNBOOKS = 'https://example.invalid/runbooks';

type HostileScrape = { up: boolean; code: string | null; warning: string | null; messageLength: number; held: number };

/** The static target of `url`, as `serve --target url` makes it. */
function targetAt(url: string): Target {
  return staticTargets([url])[0] as Target;
}

/**
 * Everything the history holds of one target: per metric, each series with all its samples, and what an
 * instant lookup finds at each of `times` (a stale marker shows there, not in the samples).
 */
function targetHistory(history: History, targetId: string, times: readonly number[]) {
  return history.metricNames(targetId).map((metric) => ({
    metric,
    series: history
      .select({ metric, target: targetId })
      .map((view) => ({ labels: view.labels, t: [...view.t], v: [...view.v] })),
    instants: times.map((at) =>
      history.instant(metric, [], at, targetId).map((s) => ({ labels: s.labels, value: s.value, at: s.timestampMs })),
    ),
  }));
}

/** The reports of the queues of `target` in a diagnosis of `source` (status, findings, signals), and its errors. */
async function verdicts(source: ScrapeSource, atMs: number, target: string) {
  const report = await diagnoseSource(source, { atMs, runbookBaseUrl: RUNBOOKS });
  return { queues: report.queues.filter((q) => q.queue.target === target), errors: report.errors };
}

/** The parts of a target's health that do not depend on real time. */
function healthOf(source: ScrapeSource, key: string) {
  const h = source.health().find((x) => x.key === key);
  return h && { up: h.up, lastError: h.lastError, samples: h.samples, bytes: h.bytes, failures: h.consecutiveFailures };
}

describe('scrape source: a hostile target beside a healthy one', () => {
  it('serves a cardinality bomb of distinct series that only the series limit refuses', () => {
    const page = cardinalityBombPage();
    expect(page.length).toBeLessThan(DEFAULT_SCRAPE_MAX_BYTES);
    const parsed = parseExposition(page.toString(), {
      keep: keepFamilies(DIAGNOSTIC_FAMILIES),
      maxSeries: 2 * CARDINALITY_BOMB_SERIES,
    });
    expect(parsed.series.count).toBe(CARDINALITY_BOMB_SERIES);
  });

  it.each(HOSTILE_KINDS)(
    '$name ($serves): the healthy target is untouched',
    async (kind) => {
      const clock = new ManualClock();
      const healthy = await serve(healthyTargetHandler(clock.now));
      const hostile = await serve(kind.handler(clock.now));
      const healthyTarget = targetAt(`${healthy.origin}/metrics`);
      const hostileTarget = targetAt(`${hostile.origin}/metrics`);
      const options = { clock, intervalMs: INTERVAL_MS, timeoutMs: TIMEOUT_MS };
      const events: ScrapeEvent[] = [];
      const together = scrapeSource({
        ...options,
        targets: [healthyTarget, hostileTarget],
        onScrape: (e) => events.push(e),
      });
      const alone = scrapeSource({ ...options, targets: [healthyTarget] });

      const times: number[] = [];
      const hostileScrapes: HostileScrape[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        if (round > 0) clock.advance(INTERVAL_MS);
        times.push(clock.t);
        await expect(together.scrapeOnce()).resolves.toBeUndefined();
        await alone.scrapeOnce();
        const h = together.health().find((x) => x.key === hostileTarget.key);
        hostileScrapes.push({
          up: h?.up ?? false,
          code: h?.lastError?.code ?? null,
          warning: h?.lastWarning?.code ?? null,
          messageLength: Math.max(h?.lastError?.message.length ?? 0, h?.lastWarning?.message.length ?? 0),
          held: together.history.targets().find((t) => t.id === hostileTarget.key)?.series ?? 0,
        });
      }

      // The hostile target: each scrape's outcome, in its health and in the scrape events.
      const expected = times.map((_, n) => kind.errorAfterScrape(n));
      expect(hostileScrapes.map((s) => s.code)).toEqual(expected);
      expect(hostileScrapes.map((s) => s.up)).toEqual(expected.map((code) => code === null));
      expect(hostileScrapes.map((s) => s.warning)).toEqual(times.map((_, n) => kind.warningAfterScrape?.(n) ?? null));
      // Whatever it sends, scrape after scrape, the target holds no more series than the held limit.
      for (const s of hostileScrapes) expect(s.held).toBeLessThanOrEqual(DEFAULT_SCRAPE_HELD_SERIES_LIMIT);
      // A hostile body is not echoed into the error message.
      for (const s of hostileScrapes) expect(s.messageLength).toBeLessThan(1_000);
      const hostileEvents = events.filter((e) => e.target.key === hostileTarget.key);
      expect(hostileEvents.map((e) => e.errorCode ?? null)).toEqual(expected);
      // Never read: a target error in `targets()` and in the report; read at times: none.
      const lastCode = expected.at(-1) as ScrapeSourceErrorCode | null;
      const targetError = expected.every((code) => code !== null) ? lastCode : null;
      const hostileName = targetNameOf(hostileTarget);
      expect(together.targets().find((t) => t.name === hostileName)?.error?.code ?? null).toBe(targetError);

      // The healthy target: every scrape succeeded, at the round's time, exactly as when it is scraped alone.
      const healthyEvents = events.filter((e) => e.target.key === healthyTarget.key);
      expect(healthyEvents.map((e) => e.ok)).toEqual(times.map(() => true));
      expect(healthOf(together, healthyTarget.key)).toEqual(healthOf(alone, healthyTarget.key));
      expect(healthOf(together, healthyTarget.key)).toMatchObject({ up: true, lastError: null, failures: 0 });

      const healthyAlone = targetHistory(alone.history, healthyTarget.key, times);
      // The comparison below compares something: every series of every queue, a sample per round.
      const series = healthyAlone.flatMap((m) => m.series);
      expect(series.length).toBeGreaterThan(50 * HEALTHY_QUEUES.length);
      expect(series.every((s) => s.t.length === ROUNDS)).toBe(true);
      expect(targetHistory(together.history, healthyTarget.key, times)).toEqual(healthyAlone);

      const healthyName = targetNameOf(healthyTarget);
      const withHostile = await verdicts(together, clock.t, healthyName);
      const withoutHostile = await verdicts(alone, clock.t, healthyName);
      expect(withoutHostile.queues).toHaveLength(HEALTHY_QUEUES.length);
      expect(withoutHostile.queues.some((q) => q.findings.length > 0)).toBe(true);
      // Quiet queues too: unknown rather than ok, as a few scrapes span no rule's whole range.
      expect(withoutHostile.queues.some((q) => q.findings.length === 0 && q.status === 'unknown')).toBe(true);
      expect(withHostile.queues).toEqual(withoutHostile.queues);
      expect(withHostile.errors.filter((e) => e.target === healthyName)).toEqual([]);
      expect(withHostile.errors.find((e) => e.target === hostileName)?.code ?? null).toBe(targetError);
    },
    120_000,
  );
});
