/**
 * A queue that falls behind gradually is reported within one `for` of ceasing to drain: from the last time its
 * depth was below the backlog's threshold, the finding is there at every step after the rule's `for`, the
 * one-minute floor the condition reads and one evaluation step (the condition is checked on the grid of
 * evaluation steps, as Prometheus evaluates an alert, so a `for` starts at the first step after the condition
 * began to hold). Both diagnoses that size workers give one answer.
 */
import { describe, expect, it } from 'vitest';
import { memoizedBackend } from '../../src/diagnosis/backend.js';
import { rule } from '../../src/diagnosis/catalog.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { EVALUATION_INTERVAL_MS } from '../../src/diagnosis/rule.js';
import { signal } from '../../src/diagnosis/signals.js';
import { runVirtual } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { BOTH_FLAVORS, MINUTE, TEN_SEEDS } from './support.js';

const BACKLOG = rule('WorkqueueBacklog');
const MIN_DEPTH = BACKLOG.thresholds.minDepth?.default ?? Number.NaN;
/** The floor of the depth the condition reads covers the last minute. */
const FLOOR_WINDOW_MS = MINUTE;

describe('gradual backlog', () => {
  it.each(BOTH_FLAVORS)(
    'is found within one `for` of the queue ceasing to drain (%s)',
    { timeout: 300_000 },
    async (flavor) => {
      for (const seed of TEN_SEEDS) {
        const run = await runVirtual('gradual-backlog', { seed, flavor, durationMs: 45 * MINUTE });
        const source = recordingSourceFromText(run.recording.text(), 'gradual.om');
        const range = source.dataRange();
        if (range === undefined) throw new Error('empty recording');
        const backend = memoizedBackend(source.backend);
        const times: number[] = [];
        for (let t = range.startMs + MINUTE; t <= range.endMs; t += EVALUATION_INTERVAL_MS / 2) times.push(t);
        const depths = await backend.evaluate(signal('depth').expr, times);
        const lastLow = times.filter((_, i) => (depths[i]?.[0]?.value ?? 0) < MIN_DEPTH).at(-1) ?? range.startMs;
        const due = lastLow + BACKLOG.forMs + FLOOR_WINDOW_MS + EVALUATION_INTERVAL_MS;
        expect(due, `seed ${seed}: the queue must stop draining well before the end`).toBeLessThan(
          range.endMs - 5 * MINUTE,
        );
        const late: number[] = [];
        for (let at = range.endMs; at >= due; at -= EVALUATION_INTERVAL_MS) {
          const report = await diagnose(backend, { atMs: at, runbookBaseUrl: 'https://example.test/runbooks' });
          const queue = report.queues.find((q) => q.queue.name === 'pod');
          if (!queue?.findings.some((f) => f.rule === 'WorkqueueBacklog')) late.push(Math.round((at - lastLow) / 1000));
        }
        expect(late, `${flavor} seed ${seed}: seconds after ceasing to drain without a Backlog finding`).toEqual([]);
        await source.close();
      }
    },
  );

  it('gives one worker count when Backlog and Saturated both fire', { timeout: 120_000 }, async () => {
    const run = await runVirtual('gradual-backlog', { seed: 1, durationMs: 45 * MINUTE });
    const source = recordingSourceFromText(run.recording.text(), 'gradual.om');
    const range = source.dataRange();
    if (range === undefined) throw new Error('empty recording');
    const report = await diagnose(source.backend, {
      atMs: range.endMs,
      runbookBaseUrl: 'https://example.test/runbooks',
    });
    const findings = report.queues.find((q) => q.queue.name === 'pod')?.findings ?? [];
    const backlog = findings.find((f) => f.rule === 'WorkqueueBacklog');
    const saturated = findings.find((f) => f.rule === 'WorkqueueSaturated');
    expect(backlog?.evidence.workersNeeded?.value).toBeGreaterThan(0);
    expect(saturated?.evidence.recommendedWorkers).toEqual(backlog?.evidence.workersNeeded);
    expect(backlog?.fix).toContain(`about ${backlog?.evidence.workersNeeded?.value} workers`);
    expect(saturated?.fix).toContain(`about ${backlog?.evidence.workersNeeded?.value} workers`);
    await source.close();
  });
});
