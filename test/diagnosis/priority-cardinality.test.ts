/**
 * Depth of unknown priority: controller-runtime's priority queue past its cardinality cap counts every change of
 * its depth under `priority="exceeded_cardinality_limit"` and leaves its other depth series at their last values.
 * The whole depth is still right, so the whole-queue signals decide (a backlog is a backlog), the per-priority
 * signals are absent rather than read from frozen series, and the report says the per-priority view is lost.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import { runVirtual } from '../../src/simulate/index.js';
import { capPriorities, EXCEEDED_PRIORITY } from '../support/priority-cardinality-cap.js';
import { diagnoseRecordingText, onlyQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;
/** The per-priority signals a backlog of real changes has (it queues no initial list at low priority). */
const PER_PRIORITY = ['normalPriorityDepthFloor', 'normalPriorityDepthSlope'];
/**
 * Whole-queue signals whose windows lie past the cap (at the end of a 30-minute run capped at 2 minutes): the sum
 * over priorities is unchanged there. (The half-hour trend spans the cap, where series start and freeze, and the
 * least-squares slope of a sum of series with different spans is not the sum of their slopes.)
 */
const WHOLE_QUEUE = ['depth', 'depthAvg', 'depthFloor', 'depthSlope', 'addRate', 'completionRate', 'busyWorkers'];

/** The one queue of a scenario's recording, as recorded and with the cap reached `capAfterMs` into the run. */
async function asRecordedAndCapped(
  scenario: string,
  seed: number,
  capAfterMs: number,
  placeholder?: string,
): Promise<{ recorded: QueueReport; capped: QueueReport }> {
  const run = await runVirtual(scenario, {
    seed,
    queue: 'priority',
    flavor: 'controller-runtime',
    durationMs: 30 * MINUTE,
  });
  const text = run.recording.text();
  const startSeconds = Number(/^workqueue_depth\{.*\} \S+ (\S+)$/m.exec(text)?.[1]);
  const capped = capPriorities(text, startSeconds + capAfterMs / 1000, placeholder);
  expect(capped).not.toBe(text);
  const [recorded, withCap] = await Promise.all([
    diagnoseRecordingText(text, 'recorded.om'),
    diagnoseRecordingText(capped, 'capped.om'),
  ]);
  return { recorded: onlyQueue(recorded), capped: onlyQueue(withCap) };
}

const firing = (q: QueueReport) => q.findings.filter((f) => f.state === 'firing').map((f) => f.rule);
const observed = (q: QueueReport) => q.observations.map((o) => o.id);

describe('depth under a priority that is not a number', () => {
  it.each([1, 2, 3])('a backlog past the cap is a backlog (seed %i)', { timeout: 120_000 }, async (seed) => {
    const { recorded, capped } = await asRecordedAndCapped('backlog', seed, 2 * MINUTE);
    expect(firing(recorded)).toContain('WorkqueueBacklog');
    expect(firing(capped)).toContain('WorkqueueBacklog');
    expect(observed(capped)).toContain('PriorityDepthUnknown');
    expect(observed(recorded)).not.toContain('PriorityDepthUnknown');
    // The whole depth is unchanged by the cap; the per-priority view is gone, not read from frozen series.
    for (const id of WHOLE_QUEUE)
      expect(capped.signals[id]?.value, id).toBeCloseTo(recorded.signals[id]?.value as number, 6);
    for (const id of PER_PRIORITY) {
      expect(recorded.signals[id]?.value, `${id} as recorded`).not.toBeNull();
      expect(capped.signals[id]?.value, `${id} past the cap`).toBeNull();
    }
  });

  it('the cap reached before the first scrape: only the placeholder series, still a backlog', {
    timeout: 120_000,
  }, async () => {
    const { capped } = await asRecordedAndCapped('backlog', 4, -MINUTE);
    expect(firing(capped)).toContain('WorkqueueBacklog');
    expect(observed(capped)).toContain('PriorityDepthUnknown');
  });

  it('any priority that is not a number loses the view, and a healthy queue stays quiet', {
    timeout: 120_000,
  }, async () => {
    const { recorded, capped } = await asRecordedAndCapped('healthy', 5, 2 * MINUTE, 'overflow');
    expect(firing(recorded)).toEqual([]);
    expect(firing(capped)).toEqual([]);
    expect(capped.status).toBe('ok');
    expect(observed(capped)).toEqual(['PriorityDepthUnknown']);
    const observation = capped.observations[0];
    expect(observation?.summary).toContain('not a number');
    expect(observation?.evidence['unknownPriorityDepthSeries']?.value).toBe(1);
  });

  it('names the placeholder controller-runtime writes', () => {
    expect(EXCEEDED_PRIORITY).toBe('exceeded_cardinality_limit');
  });
});
