/**
 * One diagnosis of a metrics source: the engine's options assembled from what the source knows (its
 * backend, the targets it read, the span of its data), the same way for `diagnose`, `serve` and `calibrate`.
 */
import type { DiagnosisBackend } from '../diagnosis/backend.js';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import { diagnose } from '../diagnosis/engine.js';
import type { EvaluationMemory } from '../diagnosis/holding.js';
import type { Report } from '../diagnosis/report.js';
import type { MetricsSource } from '../sources/source.js';

export type DiagnoseSourceOptions = {
  /** Evaluation time; default: the end of a recording's data, else now. */
  readonly atMs?: number;
  readonly runbookBaseUrl: string;
  readonly overrides?: RuleOverrides;
  /**
   * Evaluates in place of `source.backend`: a wrapper over it, such as `memoizedBackend(source.backend)`
   * kept across many evaluations of data that no longer changes (calibration judging a recording at
   * every step).
   */
  readonly backend?: DiagnosisBackend;
  /** Kept across evaluations of this source (the service): unchanged steps are not evaluated again, `since` carried. */
  readonly memory?: EvaluationMemory;
  /** Once aborted, the diagnosis rejects soon with the signal's reason. */
  readonly signal?: AbortSignal;
};

/**
 * A Prometheus source that holds no work-queue or controller series at all (its selector matches nothing, or
 * it is the wrong server): not an empty "ok".
 */
export class NoWorkQueueSeriesError extends Error {
  override readonly name = 'NoWorkQueueSeriesError';
}

export async function diagnoseSource(source: MetricsSource, options: DiagnoseSourceOptions): Promise<Report> {
  const range = source.dataRange();
  const atMs = options.atMs ?? (source.kind === 'recording' ? range?.endMs : undefined) ?? Date.now();
  const report = await diagnose(options.backend ?? source.backend, {
    atMs,
    runbookBaseUrl: options.runbookBaseUrl,
    ...(options.overrides !== undefined ? { overrides: options.overrides } : {}),
    targets: source.targets(),
    ...(options.memory !== undefined ? { memory: options.memory } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    // A live history and a recording alike start at their first sample: nothing held before it, so a window
    // recorded live and replayed at the same time gives the same report. Prometheus cannot tell (undefined).
    ...(range !== undefined ? { historyStartMs: range.startMs } : {}),
    ...(range?.keptMs !== undefined ? { historyKeptMs: range.keptMs } : {}),
  });
  if (source.kind === 'prometheus' && report.queues.length === 0 && report.errors.length === 0) {
    throw new NoWorkQueueSeriesError(
      `no work-queue or controller series in ${source.description ?? 'the Prometheus source'} over the last ${report.window} before ${report.evaluatedAt}: check the selector and the server`,
    );
  }
  return report;
}
