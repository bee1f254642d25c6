/**
 * A queue that falls behind gradually is reported within `DETECTION_PROMISE_MS` of ceasing to drain: from the last
 * time its depth was zero (a queue that keeps up drains to zero between bursts), the finding is there at every step.
 * The promise is the product's, stated in docs/calibration.md, not read from the rule: a rule whose thresholds or `for`
 * delayed it would fail here. Both diagnoses that size workers give one answer.
 */
import { describe, expect, it } from 'vitest';
import { memoizedBackend } from '../../src/diagnosis/backend.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { isFiring } from '../../src/diagnosis/report.js';
import { EVALUATION_INTERVAL_MS } from '../../src/diagnosis/rule.js';
import { signal } from '../../src/diagnosis/signals.js';
import { runVirtual } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { BOTH_FLAVORS, MINUTE, TEN_SEEDS } from './support.js';

/**
 * How soon after the queue last drained a gradual backlog is reported: a ten-minute `for` (a backlog must outlast
 * the bursts a healthy queue absorbs in minutes), the few minutes the depth needs to stand clear of zero just past
 * capacity, and an evaluation step. On these seeds it comes 11 to 15 minutes after the last zero.
 */
const DETECTION_PROMISE_MS = 16 * MINUTE;

describe('gradual backlog', () => {
  it.each(BOTH_FLAVORS)(
    'is found within 16 minutes of the queue last draining (%s)',
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
        const podDepth = (i: number) => depths[i]?.find((sample) => sample.labels['name'] === 'pod')?.value ?? 0;
        const lastLow = times.filter((_, i) => podDepth(i) === 0).at(-1) ?? range.startMs;
        const due = lastLow + DETECTION_PROMISE_MS;
        expect(due, `seed ${seed}: the queue must stop draining well before the end`).toBeLessThan(
          range.endMs - 5 * MINUTE,
        );
        const late: number[] = [];
        for (let at = range.endMs; at >= lastLow; at -= EVALUATION_INTERVAL_MS) {
          const report = await diagnose(backend, { atMs: at, runbookBaseUrl: 'https://example.test/runbooks' });
          const queue = report.queues.find((q) => q.queue.name === 'pod');
          const found = queue?.findings.some((f) => f.rule === 'WorkqueueBacklog' && isFiring(f)) === true;
          if (!found && at >= due) late.push(Math.round((at - lastLow) / 1000));
          if (!found && at < due) break;
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
