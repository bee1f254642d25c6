/**
 * The service's incremental evaluation: with its `EvaluationMemory`, an evaluation reuses the conditions'
 * steps whose data has not changed since they were computed and evaluates only the new ones, and gives the
 * report a fresh evaluation gives, findings' `since` included, scrape round after scrape round, also when a
 * target's samples arrive late (written at times before the previous evaluation) and when a target goes away.
 */
import { describe, expect, it } from 'vitest';
import type { DiagnosisBackend } from '../../src/diagnosis/backend.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { EvaluationMemory } from '../../src/diagnosis/holding.js';
import type { Report } from '../../src/diagnosis/report.js';
import { LABEL } from '../../src/metrics/names.js';
import { createStoreBackend, historyStore } from '../../src/promql/history-backend.js';
import { runVirtual } from '../../src/simulate/index.js';
import { History, type SeriesView } from '../../src/store/history.js';
import { loadRecording } from '../../src/store/recording.js';

const MINUTE = 60_000;
const SCRAPE = 15_000;
const RUNBOOK = 'https://example.invalid';

/** Every series of a recording, with `instance` set to `instance`. */
async function recordedSeries(scenario: string, seed: number, instance: string): Promise<SeriesView[]> {
  const run = await runVirtual(scenario, { seed, durationMs: 40 * MINUTE });
  const history = new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: Number.POSITIVE_INFINITY });
  loadRecording(run.recording.text(), `${scenario}.om`, { history });
  return history
    .metricNames()
    .flatMap((metric) => history.select({ metric }))
    .map((view) => ({ ...view, labels: { ...view.labels, [LABEL.instance]: instance } }));
}

/** Appends the samples of `series` in `(fromMs, toMs]` to `history` as target `target`. */
function feed(history: History, target: string, series: readonly SeriesView[], fromMs: number, toMs: number): void {
  for (const view of series) {
    let first = 0;
    while (first < view.t.length && (view.t[first] as number) <= fromMs) first++;
    let end = first;
    while (end < view.t.length && (view.t[end] as number) <= toMs) end++;
    if (end > first) {
      history.appendSamples(
        { id: target },
        view.name,
        view.labels,
        view.t.subarray(first, end),
        view.v.subarray(first, end),
      );
    }
  }
}

/** `backend`, counting the (expression, time) pairs it evaluates. */
function counting(backend: DiagnosisBackend): { backend: DiagnosisBackend; pairs: () => number } {
  let pairs = 0;
  const evaluateBatch = backend.evaluateBatch;
  return {
    backend: {
      ...backend,
      evaluate: (expr, times) => {
        pairs += times.length;
        return backend.evaluate(expr, times);
      },
      ...(evaluateBatch === undefined
        ? {}
        : {
            evaluateBatch: (exprs, times) => {
              pairs += exprs.length * times.length;
              return evaluateBatch(exprs, times);
            },
          }),
    },
    pairs: () => pairs,
  };
}

const findings = (report: Report) =>
  report.queues.flatMap((q) => q.findings.map((f) => `${q.queue.target} ${q.queue.name} ${f.rule} ${f.since}`));

describe('incremental evaluation', () => {
  it('gives the report of a fresh evaluation at every round, late samples and a removed target included, for far fewer evaluated steps', async () => {
    const onTime = await recordedSeries('mixed', 3, 'mixed:8080');
    const late = await recordedSeries('backlog', 2, 'late:8080');
    const startMs = Math.min(...onTime.map((v) => v.t[0] as number));
    const history = new History({
      retentionMs: Number.POSITIVE_INFINITY,
      maxSamplesPerSeries: Number.POSITIVE_INFINITY,
    });
    const store = createStoreBackend(historyStore(history));
    const carried = counting(store);
    const fresh = counting(store);
    const memory = new EvaluationMemory();
    let at = startMs + 25 * MINUTE;
    // The late target's samples come 20 s behind, so each round writes some before the previous evaluation;
    // for 3 minutes none come at all, then all of them at once.
    feed(history, 'mixed', onTime, Number.NEGATIVE_INFINITY, at);
    let lateFed = at - 20_000;
    feed(history, 'late', late, Number.NEGATIVE_INFINITY, lateFed);
    let withFindings = 0;
    for (let round = 0; round < 40; round++) {
      feed(history, 'mixed', onTime, at, at + SCRAPE);
      if (round < 10 || round >= 22) {
        feed(history, 'late', late, lateFed, at + SCRAPE - 20_000);
        lateFed = at + SCRAPE - 20_000;
      }
      at += SCRAPE;
      if (round === 30) expect(history.removeTarget('late')).toBe(true);
      // Evaluations fall between scrapes too, off the grid of steps.
      const evaluatedAt = round % 3 === 0 ? at + 7_000 : at;
      const options = { atMs: evaluatedAt, runbookBaseUrl: RUNBOOK };
      const incremental = await diagnose(carried.backend, { ...options, memory });
      const full = await diagnose(fresh.backend, options);
      expect(incremental, `round ${round}`).toEqual(full);
      if (findings(full).length > 0) withFindings += 1;
    }
    expect(withFindings).toBe(40);
    expect(carried.pairs()).toBeLessThan(fresh.pairs() / 5);
  }, 120_000);

  it('forgets what it kept when given another backend', async () => {
    const series = await recordedSeries('backlog', 1, 'b:8080');
    const startMs = Math.min(...series.map((v) => v.t[0] as number));
    const at = startMs + 30 * MINUTE;
    const full = new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: Number.POSITIVE_INFINITY });
    feed(full, 'b', series, Number.NEGATIVE_INFINITY, at);
    const empty = new History();
    const memory = new EvaluationMemory();
    const options = { atMs: at, runbookBaseUrl: RUNBOOK, memory };
    const first = await diagnose(createStoreBackend(historyStore(full)), options);
    expect(findings(first).length).toBeGreaterThan(0);
    const other = await diagnose(createStoreBackend(historyStore(empty)), options);
    expect(other.queues).toEqual([]);
    expect(memory.rememberedSince()).toBe(0);
  }, 60_000);
});
