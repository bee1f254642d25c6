/**
 * The report: the shape of `diagnose --output json` and `GET /api/v1/diagnosis`
 * (`schemas/report.schema.json`). Fields may be added; none is renamed or removed.
 */
import type { ObservationId } from './observation.js';
import type { RuleId, Severity } from './rule.js';
import type { SignalValue } from './units.js';

export type QueueStatus = 'ok' | 'warning' | 'critical' | 'unknown' | 'standby';

export type Finding = {
  readonly rule: RuleId;
  readonly severity: Severity;
  /** When the condition started to hold without interruption (RFC 3339), or null when unknown. */
  readonly since: string | null;
  readonly summary: string;
  readonly evidence: Readonly<Record<string, SignalValue>>;
  readonly cause: string;
  readonly fix: string;
  readonly runbook: string;
};

/** What the metrics suggest but cannot prove; never a finding, never alerted on, no effect on `status`. */
export type Observation = {
  readonly id: ObservationId;
  readonly summary: string;
  readonly evidence: Readonly<Record<string, SignalValue>>;
};

export type QueueReport = {
  readonly id: string;
  readonly queue: { readonly target: string; readonly name: string | null; readonly controller: string | null };
  readonly status: QueueStatus;
  readonly findings: readonly Finding[];
  readonly signals: Readonly<Record<string, SignalValue>>;
  /** Always present; empty for target-level entries. */
  readonly observations: readonly Observation[];
};

export type ReportError = { readonly target: string; readonly code: string; readonly message: string };

export type Report = {
  readonly evaluatedAt: string;
  readonly window: string;
  readonly queues: readonly QueueReport[];
  readonly errors: readonly ReportError[];
};

const STATUS_RANK: Record<QueueStatus, number> = { critical: 4, warning: 3, unknown: 2, standby: 1, ok: 0 };

/** Worst first: critical, warning, unknown, standby, ok; then by target and name. */
export function compareQueues(a: QueueReport, b: QueueReport): number {
  return (
    STATUS_RANK[b.status] - STATUS_RANK[a.status] ||
    a.queue.target.localeCompare(b.queue.target) ||
    (a.queue.name ?? '').localeCompare(b.queue.name ?? '') ||
    (a.queue.controller ?? '').localeCompare(b.queue.controller ?? '')
  );
}

export function statusRank(status: QueueStatus): number {
  return STATUS_RANK[status];
}
