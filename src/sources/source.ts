/**
 * Where the numbers come from: one interface, three implementations.
 * - `scrape`: live targets scraped into the in-process history (sidecar default, discovery);
 * - `recording`: a recording file replayed into the history as if scraped;
 * - `prometheus`: a Prometheus-compatible HTTP API that evaluates every signal's PromQL itself.
 * The engine sees only `backend` (evaluation) and `targets()` (what was read, and what failed).
 */

import type { DiagnosisBackend } from '../promql/backend.js';
import type { TargetState } from './target-state.js';

export type SourceKind = 'scrape' | 'recording' | 'prometheus';

/** The time span a source holds data for (see `MetricsSource.dataRange`). */
export type DataRange = {
  readonly startMs: number;
  readonly endMs: number;
  /**
   * How much history the source keeps behind its newest sample (a live history's retention); absent where it keeps
   * all it read (a recording). Data older than that is gone, however long ago the first sample came.
   */
  readonly keptMs?: number;
};

export interface MetricsSource {
  readonly kind: SourceKind;
  readonly backend: DiagnosisBackend;
  /** Targets known to the source, each with its scrape error when it could not be read. Empty in Prometheus mode. */
  targets(): TargetState[];
  /**
   * The time span with data: a recording's first and last sample, the scraped history's; undefined where
   * the source cannot tell (Prometheus). The engine holds no condition before its start (a `for` longer than
   * the data leaves a finding pending, a range longer than it leaves a rule unknown) and `diagnose` defaults
   * `--at` to its end.
   */
  dataRange(): DataRange | undefined;
  /** What the source reads, for messages: a Prometheus source's server and fleet selector. */
  readonly description?: string;
  /** Releases timers, sockets and workers. Idempotent. */
  close(): Promise<void>;
}
