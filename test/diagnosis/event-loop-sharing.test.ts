/**
 * The in-process evaluation shares the event loop and stops when asked: between expressions it yields once its
 * slice is used up (with a zero slice, before every expression), and an aborted signal ends a diagnosis at the
 * next expression with the signal's reason; a stopped service ends its running evaluation and keeps its last
 * report. Counted in event-loop turns and expressions, never in wall-clock time.
 */
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import { keepFamilies } from '../../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../../src/metrics/names.js';
import type { DiagnosisBackend } from '../../src/promql/backend.js';
import { createStoreBackend, historyStore } from '../../src/promql/history-backend.js';
import { createDiagnosisService } from '../../src/service/diagnosis-service.js';
import { runVirtual } from '../../src/simulate/index.js';
import type { MetricsSource } from '../../src/sources/source.js';
import { History } from '../../src/store/history.js';
import { loadRecording } from '../../src/store/recording.js';

const MINUTE = 60_000;

/** A recorded run of the mixed scenario, its end, and a backend over it with the given slice. */
async function mixedRun(sliceMs: number): Promise<{ backend: DiagnosisBackend; endMs: number }> {
  const run = await runVirtual('mixed', { seed: 11, durationMs: 20 * MINUTE });
  const recording = loadRecording(run.recording.text(), 'mixed.om', {
    history: new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: Number.POSITIVE_INFINITY }),
    keep: keepFamilies(DIAGNOSTIC_FAMILIES),
  });
  return { backend: createStoreBackend(historyStore(recording.history), { sliceMs }), endMs: recording.endMs ?? 0 };
}

/** Counts event-loop turns (`setImmediate` callbacks) while `work` runs. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let running = true;
  const tick = (): void => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await work();
    return { turns, result };
  } finally {
    running = false;
  }
}

/** `backend`, counting the expressions it is asked to evaluate (each at each of its times). */
function counted(backend: DiagnosisBackend): { backend: DiagnosisBackend; evaluations: () => number } {
  let evaluations = 0;
  const batch = backend.evaluateBatch;
  if (batch === undefined) throw new Error('the store backend evaluates in batches');
  return {
    backend: {
      ...backend,
      evaluateBatch: (exprs, times, signal) => {
        evaluations += exprs.length * times.length;
        return batch(exprs, times, signal);
      },
    },
    evaluations: () => evaluations,
  };
}

describe('evaluation on a shared event loop', () => {
  it('yields to the event loop between expressions once its slice is used up', async () => {
    const { backend, endMs } = await mixedRun(0);
    const { backend: counting, evaluations } = counted(backend);
    const { turns, result } = await turnsDuring(() =>
      diagnose(counting, { atMs: endMs, runbookBaseUrl: 'https://example.invalid' }),
    );
    expect(result.queues.length).toBeGreaterThan(3);
    // A zero slice yields before every expression: at least one turn each.
    expect(evaluations()).toBeGreaterThan(100);
    expect(turns).toBeGreaterThanOrEqual(evaluations());
  });

  it('gives the same report whatever the slice', async () => {
    const sliced = await mixedRun(0);
    const whole = await mixedRun(Number.POSITIVE_INFINITY);
    const options = { atMs: sliced.endMs, runbookBaseUrl: 'https://example.invalid' };
    expect(await diagnose(sliced.backend, options)).toEqual(await diagnose(whole.backend, options));
  });

  it('ends at the next expression once the signal is aborted, with its reason', async () => {
    const { backend, endMs } = await mixedRun(0);
    const full = counted(backend);
    await diagnose(full.backend, { atMs: endMs, runbookBaseUrl: 'https://example.invalid' });

    // Aborted at the fifth event-loop turn: with a zero slice each expression takes a turn, so a diagnosis
    // that went on would see about as many turns as a full one evaluates expressions.
    const stop = new AbortController();
    const reason = new Error('stopping');
    const { turns, result } = await turnsDuring(async () => {
      let seen = 0;
      const abortAtFifth = (): void => {
        if (++seen === 5) stop.abort(reason);
        else setImmediate(abortAtFifth);
      };
      setImmediate(abortAtFifth);
      return diagnose(backend, { atMs: endMs, runbookBaseUrl: 'https://example.invalid', signal: stop.signal }).then(
        () => 'finished',
        (error: unknown) => error,
      );
    });
    expect(result).toBe(reason);
    expect(full.evaluations()).toBeGreaterThan(100);
    expect(turns).toBeLessThan(20);
  });

  it('a stopped service ends its running evaluation, keeps the last report and counts nothing more', async () => {
    const { backend, endMs } = await mixedRun(0);
    const source: MetricsSource = {
      kind: 'recording',
      backend,
      targets: () => [],
      dataRange: () => undefined,
      close: async () => {},
    };
    const outcomes: boolean[] = [];
    const service = createDiagnosisService({
      source,
      evaluationIntervalMs: 3_600_000,
      runbookBaseUrl: 'https://example.invalid',
      now: () => endMs,
      onEvaluation: (outcome) => outcomes.push(outcome.ok),
    });
    const first = await service.evaluate();
    expect(first.ok).toBe(true);
    const report = service.report();

    const second = service.evaluate();
    // Let the second evaluation start and yield once, then stop the service under it.
    await new Promise((resolve) => setImmediate(resolve));
    await service.stop();
    const outcome = await second;
    expect(outcome).toMatchObject({ ok: false, error: 'stopped' });
    expect(service.report()).toBe(report);
    expect(service.lastError()).toBeUndefined();
    expect(outcomes).toEqual([true]);
  });
});
