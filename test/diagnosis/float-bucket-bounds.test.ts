/**
 * Histogram bucket bounds written as floats. client-go exposes `le="10"`; Prometheus 3 stores classic-histogram
 * bounds normalised to floats (`le="10.0"`, `le="1.0"`), so rules and Prometheus-mode queries see those. The
 * signals that select one bucket (the 10 s bucket of slow syncs) read the same either way, and so does the verdict.
 */
import { describe, expect, it } from 'vitest';
import type { QueueReport } from '../../src/diagnosis/report.js';
import { scenarioQueue } from '../support/scenario-queue.js';

const MINUTE = 60_000;

/** Every integer `le` bound of the recording written as a float, as Prometheus 3 stores it. */
function floatBounds(recording: string): string {
  const rewritten = recording.replace(/le="(\d+)"/g, 'le="$1.0"');
  expect(rewritten).toContain('le="10.0"');
  expect(rewritten).not.toMatch(/le="\d+"/);
  return rewritten;
}

const slowSignals = (q: QueueReport) => [q.signals['slowSyncRate']?.value, q.signals['slowSyncShare']?.value];

describe('bucket bounds written as floats', () => {
  const params = { seed: 11, durationMs: 30 * MINUTE, flavor: 'controller-runtime' as const };

  it('reads the slow syncs and the SlowWork verdict as with integer bounds', { timeout: 120_000 }, async () => {
    const asExposed = await scenarioQueue('blocking-call', params);
    const asStored = await scenarioQueue('blocking-call', params, floatBounds);
    const [rate, share] = slowSignals(asExposed);
    expect(rate).toBeGreaterThan(0);
    expect(share).toBeGreaterThan(0);
    expect(slowSignals(asStored)).toEqual([rate, share]);
    expect(asExposed.findings.map((f) => f.rule)).toContain('WorkqueueSlowWork');
    expect(asStored.findings.map((f) => f.rule)).toEqual(asExposed.findings.map((f) => f.rule));
  });
});
