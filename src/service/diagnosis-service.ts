/**
 * The running service's core, independent of HTTP: it evaluates the diagnoses on an interval over a
 * source (scraped targets or Prometheus; the first evaluation at start, the next ones at multiples of the
 * interval, a moment after each) and keeps the latest report. The REST API and the service's own
 * metrics read from here; nothing here listens or writes files.
 */

import type { RuleOverrides } from '../diagnosis/catalog.js';
import { EvaluationMemory } from '../diagnosis/holding.js';
import type { Report } from '../diagnosis/report.js';
import type { MetricsSource } from '../sources/source.js';
import { diagnoseSource } from './diagnose-source.js';

export type DiagnosisServiceOptions = {
  readonly source: MetricsSource;
  /** How often the diagnoses are evaluated. */
  readonly evaluationIntervalMs: number;
  readonly runbookBaseUrl: string;
  readonly overrides?: RuleOverrides;
  /** Time source; defaults to `Date.now`. The demo's warm-up evaluates at virtual times. */
  readonly now?: () => number;
  /** Called after each evaluation (for the service's own metrics). */
  readonly onEvaluation?: (outcome: EvaluationOutcome) => void;
};

export type EvaluationOutcome = {
  readonly ok: boolean;
  readonly durationMs: number;
  readonly report?: Report;
  readonly error?: string;
};

export interface DiagnosisService {
  /** The latest report, undefined until the first evaluation finished. */
  report(): Report | undefined;
  /** True once a first evaluation finished (readiness). */
  ready(): boolean;
  /** The last evaluation error, if the last evaluation failed (the previous report is kept). */
  lastError(): string | undefined;
  readonly overrides: RuleOverrides;
  readonly source: MetricsSource;
  /** Evaluates now; concurrent calls share one evaluation. */
  evaluate(): Promise<EvaluationOutcome>;
  start(): void;
  /**
   * Stops the interval and ends a running evaluation at its next unit of work (the in-process backend checks
   * between expressions, a remote one aborts its requests); resolves once it has ended. The previous report
   * stays; the interrupted evaluation is neither reported nor counted.
   */
  stop(): Promise<void>;
}

/**
 * Timed evaluations run at multiples of the interval (so consecutive evaluations reuse the steps of the rules'
 * 30-second grid that the previous one evaluated, instead of evaluating one more time off the grid), this long
 * after the multiple: a scrape that started before it has landed by then.
 */
const MAX_SETTLE_MS = 1_000;

export function createDiagnosisService(options: DiagnosisServiceOptions): DiagnosisService {
  const now = options.now ?? Date.now;
  const overrides = options.overrides ?? {};
  let latest: Report | undefined;
  let error: string | undefined;
  let running: Promise<EvaluationOutcome> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stopping = new AbortController();
  /** Steps and findings' `since` carried from one evaluation to the next (the source is the same every time). */
  const memory = new EvaluationMemory();

  /** Evaluates at `atMs`; a call while an evaluation runs shares it. */
  function evaluateAt(atMs: number): Promise<EvaluationOutcome> {
    running ??= evaluateOnce(atMs).finally(() => {
      running = undefined;
    });
    return running;
  }

  async function evaluateOnce(atMs: number): Promise<EvaluationOutcome> {
    const started = performance.now();
    try {
      const report = await diagnoseSource(options.source, {
        atMs,
        runbookBaseUrl: options.runbookBaseUrl,
        overrides,
        memory,
        signal: stopping.signal,
      });
      latest = report;
      error = undefined;
      const outcome = { ok: true, durationMs: performance.now() - started, report };
      options.onEvaluation?.(outcome);
      return outcome;
    } catch (e) {
      if (stopping.signal.aborted) return { ok: false, durationMs: performance.now() - started, error: 'stopped' };
      error = e instanceof Error ? e.message : String(e);
      const outcome = { ok: false, durationMs: performance.now() - started, error };
      options.onEvaluation?.(outcome);
      return outcome;
    }
  }

  const service: DiagnosisService = {
    report: () => latest,
    ready: () => latest !== undefined,
    lastError: () => error,
    overrides,
    source: options.source,
    evaluate() {
      return evaluateAt(now());
    },
    start() {
      if (timer !== undefined || stopped) return;
      const interval = options.evaluationIntervalMs;
      const settleMs = Math.min(MAX_SETTLE_MS, interval / 10);
      // The first evaluation at once; then each at a multiple of the interval, run once the scrapes that started
      // before it have had `settleMs` to land.
      const tick = (atMs: number): void => {
        void evaluateAt(atMs).finally(() => {
          if (stopped) return;
          const t = now();
          const next = (Math.floor(t / interval) + 1) * interval;
          timer = setTimeout(() => tick(next), next - t + settleMs).unref();
        });
      };
      tick(now());
    },
    async stop() {
      stopped = true;
      stopping.abort(new Error('the diagnosis service stopped'));
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await running;
      memory.close();
    },
  };
  return service;
}
