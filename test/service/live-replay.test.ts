/**
 * Live equals replay: a window diagnosed live and written as a recording gives the identical report (findings
 * with their state and `since`, every signal value, observations, unknown rules) when the recording is replayed
 * at the live report's evaluation time. Every scenario runs as a live simulated controller on loopback with a
 * warmed history (the demo's path: half an hour on virtual time, then the same process on the real clock),
 * scraped live a few times more, so the window holds findings that fire, pending ones and quiet queues.
 *
 * Also: a live history shorter than a rule's `for` leaves its finding pending, never firing, and a replay of it
 * agrees (the recording starts where the live history did).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/diagnosis/report.js';
import { staticTargets } from '../../src/discovery/static.js';
import { type DemoTarget, startDemoTarget } from '../../src/service/demo-source.js';
import { diagnoseSource } from '../../src/service/diagnose-source.js';
import { ENGINE_QUEUE_KEYING } from '../../src/service/queue-keying.js';
import { SCENARIO_NAMES, startLiveSimulation } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { createScrapeSource, type ScrapeSource } from '../../src/sources/scrape-source.js';
import { History } from '../../src/store/history.js';
import { historyToRecording } from '../../src/store/history-recording.js';
import { startHttpServer } from '../support/local-server.js';

const RUNBOOKS = 'https://runbooks.invalid';
const MINUTE = 60_000;
const WARM_UP_MS = 35 * MINUTE;
const WARM_UP_INTERVAL_MS = 15_000;
const LIVE_INTERVAL_MS = 1_000;
const LIVE_SCRAPES = 3;
/**
 * Simulated controllers render their pages in this process, beside every other case of the file: on a loaded
 * machine one page can take well over a second. A scrape that times out after a success more than 1.5
 * intervals old is a target error live, which a recording does not carry, so these targets get a timeout far
 * above a page's time (the comparison is about the data, not about timeouts).
 */
const SIMULATED = { intervalMs: 5_000, timeoutMs: 4_500 } as const;

/**
 * The replay's report is the live one: every queue, finding, signal, observation and unknown rule. Scrape
 * errors are the one thing a recording does not carry (their messages); a failed scrape is in it as `up` 0,
 * and its stale markers are what the comparison checks.
 */
function expectSameReport(replayed: Report, live: Report): void {
  expect({ ...replayed, errors: [] }).toEqual({ ...live, errors: [] });
  expect(replayed.errors).toEqual([]);
}

/** Runs `body` with a list of stops, then runs them in reverse order whatever happened. */
async function withStops(body: (stops: Array<() => Promise<void>>) => Promise<void>): Promise<void> {
  const stops: Array<() => Promise<void>> = [];
  try {
    await body(stops);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Scrapes beyond `count` to reach a readable target, at most (a loaded machine can time a page out). */
const EXTRA_SCRAPES = 5;

/**
 * Scrapes `source` `count` times, its interval apart, and on until the last scrape of every target succeeded (at
 * most `EXTRA_SCRAPES` more): a report made just after a failed scrape is about a target that could not be read,
 * whose series are stale, not about the scenario (the failed scrape's own case is below). Fails when a target is
 * still unreadable then.
 */
async function scrapeLive(source: ScrapeSource, count: number): Promise<void> {
  for (let i = 0; i < count + EXTRA_SCRAPES; i++) {
    if (i >= count && source.health().every((h) => h.up)) return;
    if (i > 0) await sleep(source.intervalMs);
    await source.scrapeOnce();
  }
  expect(source.health().filter((h) => !h.up)).toEqual([]);
}

/** The live report, and the report of the same history replayed from its recording at the live evaluation time. */
async function liveAndReplay(source: ScrapeSource): Promise<{ live: Report; replayed: Report }> {
  const live = await diagnoseSource(source, { runbookBaseUrl: RUNBOOKS });
  const recording = recordingSourceFromText(historyToRecording(source.history), 'live.om');
  try {
    const replayed = await diagnoseSource(recording, { atMs: Date.parse(live.evaluatedAt), runbookBaseUrl: RUNBOOKS });
    return { live, replayed };
  } finally {
    await recording.close();
  }
}

// Concurrent: each case spends most of its time waiting for the next live scrape.
describe.concurrent('live equals replay', () => {
  it.each(SCENARIO_NAMES)(
    '%s: the recorded live window replays to the identical report',
    { timeout: 300_000 },
    (scenario) =>
      withStops(async (stops) => {
        const history = new History();
        const demo: DemoTarget = await startDemoTarget({
          scenario,
          history,
          scrapeIntervalMs: WARM_UP_INTERVAL_MS,
          warmUpMs: WARM_UP_MS,
        });
        stops.push(() => demo.stop());
        const source = createScrapeSource({
          queueKeying: ENGINE_QUEUE_KEYING,
          targets: [demo.target],
          history,
          ...SIMULATED,
        });
        stops.push(() => source.close());
        await scrapeLive(source, LIVE_SCRAPES);

        const { live, replayed } = await liveAndReplay(source);
        expect(live.queues.length).toBeGreaterThan(0);
        // A scenario with a planted problem shows it after its warm-up: the comparison covers findings too.
        if (demo.truth.queues.some((q) => q.expected.length > 0)) {
          expect(live.queues.some((q) => q.findings.length > 0)).toBe(true);
        }
        expectSameReport(replayed, live);
      }),
  );

  it('a failed scrape and a series that leaves: stale live and on replay', { timeout: 60_000 }, () =>
    withStops(async (stops) => {
      const page = readFileSync(
        fileURLToPath(new URL('../fixtures/client-go/controller-runtime-backlog.prom', import.meta.url)),
        'utf8',
      );
      const withoutDepth = page.replace(/^workqueue_depth\{.*\n/m, '');
      expect(withoutDepth).not.toBe(page);
      // Scrapes 1-2 the whole page, 3 fails, 4 the page without its depth series, then the whole page again.
      let requests = 0;
      const server = await startHttpServer((_req, res) => {
        requests++;
        if (requests === 3) {
          res.writeHead(500).end('down');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(requests === 4 ? withoutDepth : page);
      });
      stops.push(() => server.close());
      const source = createScrapeSource({
        queueKeying: ENGINE_QUEUE_KEYING,
        targets: staticTargets([`${server.origin}/metrics`], { job: 'live-replay' }),
        intervalMs: LIVE_INTERVAL_MS,
      });
      stops.push(() => source.close());
      await scrapeLive(source, 4);
      const atFourth = await liveAndReplay(source);
      expectSameReport(atFourth.replayed, atFourth.live);
      // The depth that left is stale live (no value now), and so on replay.
      expect(atFourth.live.queues[0]?.signals['depth']?.value).toBeNull();
      expect(atFourth.live.queues[0]?.signals['addRate']?.value).not.toBeNull();
      await scrapeLive(source, 1);
      const atFifth = await liveAndReplay(source);
      expectSameReport(atFifth.replayed, atFifth.live);
    }),
  );

  it('a history shorter than a for: pending live and on replay, with the time it fires', { timeout: 120_000 }, () =>
    withStops(async (stops) => {
      const sim = await startLiveSimulation({ scenario: 'hot-loop-status-write', listen: '127.0.0.1:0' });
      stops.push(() => sim.stop());
      const source = createScrapeSource({
        queueKeying: ENGINE_QUEUE_KEYING,
        targets: staticTargets([sim.url], { job: 'live-replay' }),
        ...SIMULATED,
      });
      stops.push(() => source.close());
      await scrapeLive(source, 4);
      // The hot loop's rates are medians of two-minute slices that end on whole minutes: the first is read at the
      // first whole minute after two scrapes. Scrape on past it (at most a minute), still far short of the `for`.
      const firstSliceEnd = Math.ceil(((source.dataRange()?.startMs ?? 0) + SIMULATED.intervalMs) / MINUTE) * MINUTE;
      while (Date.now() <= firstSliceEnd) {
        await sleep(source.intervalMs);
        await source.scrapeOnce();
      }

      const { live, replayed } = await liveAndReplay(source);
      expectSameReport(replayed, live);
      const findings = live.queues.flatMap((q) => q.findings);
      expect(findings.length).toBeGreaterThan(0);
      const start = source.dataRange()?.startMs ?? Number.NaN;
      for (const finding of findings) {
        // A few seconds of data cannot have held any rule's `for`.
        expect(finding.state).toBe('pending');
        expect(Date.parse(finding.since ?? '')).toBeGreaterThanOrEqual(start);
        expect(Date.parse(finding.firesAt ?? '')).toBeGreaterThan(Date.parse(live.evaluatedAt));
      }
      const queue = live.queues.find((q) => q.findings.some((f) => f.rule === 'WorkqueueHotLoop'));
      expect(queue?.status).toBe('pending');
      // The rules that do not hold over seconds of data are not judged: nothing is called ok.
      expect(live.queues.every((q) => q.status !== 'ok')).toBe(true);
      expect(live.queues.flatMap((q) => q.unknown ?? []).length).toBeGreaterThan(0);
    }),
  );
});
