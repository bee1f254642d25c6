/**
 * A history kept for less than a rule reads is a history that never spans the rule's range, however long ago its
 * first sample came: the rule is unknown (unless its condition holds), with the setting to raise, never judged
 * on windows read only in part. The scraped history says how much it keeps; a recording keeps all it read; the
 * service warns at start.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../src/cli/serve.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { Report } from '../../src/diagnosis/report.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { History } from '../../src/store/history.js';
import { ManualClock, queuePage, scrapeSource, servePage } from '../sources/scrape-support.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { queueSeries, seriesRecording } from '../support/series-recording.js';

const MINUTE = 60_000;
const TARGET = { job: 'ctrl', instance: 'a:8080' };

/** An hour of a queue that keeps up: 2 adds a second, each finished at once, the depth at zero. */
const HOUR_OF_A_QUIET_QUEUE = seriesRecording({
  series: queueSeries(
    { ...TARGET, controller: 'quiet', name: 'quiet' },
    { depth: () => 0, adds: (t) => 2 * t, completions: (t) => 2 * t },
  ),
  durationSec: 60 * 60,
});

async function diagnoseKeeping(keptMs: number | undefined): Promise<Report> {
  const source = recordingSourceFromText(HOUR_OF_A_QUIET_QUEUE, 'quiet.om');
  const range = source.dataRange();
  if (range === undefined) throw new Error('the recording holds no samples');
  try {
    return await diagnose(source.backend, {
      atMs: range.endMs,
      runbookBaseUrl: 'https://runbooks.invalid',
      targets: source.targets(),
      historyStartMs: range.startMs,
      ...(keptMs !== undefined ? { historyKeptMs: keptMs } : {}),
    });
  } finally {
    await source.close();
  }
}

const unknownOf = (report: Report) => report.queues.find((q) => q.queue.name === 'quiet')?.unknown ?? [];

describe('a history kept for less than a rule reads', () => {
  it('leaves the rule unknown, naming the retention and the range, however long ago the history began', async () => {
    const unknown = unknownOf(await diagnoseKeeping(15 * MINUTE));
    // Backlog reads the half hour; the other rules read 15 minutes at most, which 15 minutes kept span.
    expect(unknown.map((u) => u.rule)).toEqual(['WorkqueueBacklog']);
    expect(unknown[0]?.reason).toBe(
      "the history keeps 15m (scrape.retention), shorter than the rule's range 30m: keep 30m or more",
    );
  });

  it('judges every rule on the default half hour kept, as on a recording that keeps everything', async () => {
    expect(unknownOf(await diagnoseKeeping(30 * MINUTE))).toEqual([]);
    expect(unknownOf(await diagnoseKeeping(undefined))).toEqual([]);
  });

  // The page server and the scrape source are closed after the test by scrape-support.
  it('the scraped history says what it keeps; a recording keeps all it read', async () => {
    const page = await servePage(() => queuePage({ depth: 0, adds: 1 }));
    const clock = new ManualClock();
    const src = scrapeSource({
      targets: [{ key: 'k', url: `${page.origin}/metrics`, labels: {} }],
      clock,
      history: new History({ retentionMs: 12 * MINUTE }),
    });
    const recording = recordingSourceFromText(HOUR_OF_A_QUIET_QUEUE, 'quiet.om');
    try {
      await src.scrapeOnce();
      expect(src.dataRange()?.keptMs).toBe(12 * MINUTE);
      expect(recording.dataRange()?.keptMs).toBeUndefined();
    } finally {
      await recording.close();
    }
  });
});

describe('the service', () => {
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  it('warns at start of the rules its retention never lets it judge, and not at the default', async () => {
    const warnings = async (retention?: string): Promise<string[]> => {
      const lines: string[] = [];
      const config = resolveServiceConfig({
        flags: { target: ['http://127.0.0.1:9/metrics'], listen: '127.0.0.1:0', ...(retention ? { retention } : {}) },
        env: {},
      });
      const server = await startServer(config, { logger: capturingLogger(lines), processMetrics: false });
      stops.push(() => server.close());
      return lines.filter((l) => l.includes('scrape.retention is shorter'));
    };
    const [warning, ...more] = await warnings('20m');
    expect(more).toEqual([]);
    expect(JSON.parse(warning ?? '{}')).toMatchObject({
      retention: '20m',
      rules: [{ rule: 'WorkqueueBacklog', range: '30m' }],
    });
    expect(await warnings()).toEqual([]);
  }, 30_000);
});
