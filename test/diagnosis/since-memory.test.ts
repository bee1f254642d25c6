/**
 * A service evaluating the same source again and again carries each finding's `since` over instead of
 * tracing it back every time: the same `since` as a fresh trace, for far fewer evaluations of the conditions.
 */
import { describe, expect, it } from 'vitest';
import type { DiagnosisBackend } from '../../src/diagnosis/backend.js';
import { ruleSettings } from '../../src/diagnosis/catalog.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { EvaluationMemory } from '../../src/diagnosis/holding.js';
import type { Report } from '../../src/diagnosis/report.js';
import { EVALUATION_INTERVAL_MS } from '../../src/diagnosis/rule.js';
import { runVirtual } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';

const MINUTE = 60_000;
/** Rules kept firing through dips: their state is replayed at each evaluation, no `since` carried. */
const KEPT_RULES = new Set(
  ruleSettings()
    .filter((s) => s.keepFiringForMs > 0)
    .map((s) => s.rule.id),
);

/** `backend`, counting the times it is asked to evaluate an expression at. */
function counting(backend: DiagnosisBackend): { backend: DiagnosisBackend; times: () => number } {
  let times = 0;
  return {
    backend: {
      evaluate: (expr, at) => {
        times += at.length;
        return backend.evaluate(expr, at);
      },
      seriesLabels: (metric, from, to) => backend.seriesLabels(metric, from, to),
    },
    times: () => times,
  };
}

const sinceOf = (report: Report) =>
  report.queues.flatMap((q) => q.findings.map((f) => `${q.queue.name ?? '-'} ${f.rule} ${f.since}`)).sort();

describe('since carried across evaluations', () => {
  it('gives the since a fresh trace gives, with fewer evaluations, and forgets findings that stop', {
    timeout: 120_000,
  }, async () => {
    const run = await runVirtual('mixed', { seed: 3, durationMs: 50 * MINUTE });
    const source = recordingSourceFromText(run.recording.text(), 'mixed.om');
    const range = source.dataRange()!;
    const memory = new EvaluationMemory();
    const carried = counting(source.backend);
    const fresh = counting(source.backend);
    let findings = 0;
    for (let at = range.endMs - 20 * MINUTE; at <= range.endMs; at += EVALUATION_INTERVAL_MS) {
      const options = { atMs: at, runbookBaseUrl: 'https://example.invalid' };
      const withMemory = await diagnose(carried.backend, { ...options, memory });
      const traced = await diagnose(fresh.backend, options);
      expect(sinceOf(withMemory)).toEqual(sinceOf(traced));
      findings += withMemory.queues.reduce((n, q) => n + q.findings.length, 0);
      // Only what holds now is remembered (a rule kept firing through dips replays its state instead).
      const holdingNow = withMemory.queues.reduce(
        (n, q) => n + q.findings.filter((f) => !KEPT_RULES.has(f.rule)).length,
        0,
      );
      expect(memory.rememberedSince()).toBeGreaterThanOrEqual(holdingNow);
    }
    expect(findings).toBeGreaterThan(0);
    expect(carried.times()).toBeLessThan(fresh.times() * 0.8);
  });

  it("traces again when the remembered evaluation is older than this one's `for`", async () => {
    const run = await runVirtual('backlog', { seed: 2, durationMs: 45 * MINUTE });
    const source = recordingSourceFromText(run.recording.text(), 'backlog.om');
    const range = source.dataRange()!;
    const memory = new EvaluationMemory();
    const options = { runbookBaseUrl: 'https://example.invalid', memory };
    await diagnose(source.backend, { ...options, atMs: range.endMs - 25 * MINUTE });
    // Far beyond any `for`: the remembered since may not be used; the answer is a fresh trace's.
    const later = await diagnose(source.backend, { ...options, atMs: range.endMs });
    const traced = await diagnose(source.backend, { atMs: range.endMs, runbookBaseUrl: 'https://example.invalid' });
    expect(sinceOf(later)).toEqual(sinceOf(traced));
    expect(sinceOf(later).length).toBeGreaterThan(0);
  });
});
