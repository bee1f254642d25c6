/**
 * The running service's core, independent of HTTP: it evaluates the diagnoses on an interval over a
 * source (scraped targets or Prometheus) and keeps the latest report. The REST API and the service's own
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

  async function evaluateOnce(): Promise<EvaluationOutcome> {
    const started = performance.now();
    try {
      const report = await diagnoseSource(options.source, {
        atMs: now(),
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
      running ??= evaluateOnce().finally(() => {
        running = undefined;
      });
      return running;
    },
    start() {
      if (timer !== undefined || stopped) return;
      const tick = (): void => {
        void service.evaluate().finally(() => {
          if (!stopped) timer = setTimeout(tick, options.evaluationIntervalMs).unref();
        });
      };
      tick();
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
