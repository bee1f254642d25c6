/**
 * The report: the shape of `diagnose --output json` and `GET /api/v1/diagnosis` (`schemas/report.schema.json`).
 * Fields may be added; none is renamed or removed. The types come from the schemas in `report-schema.ts`,
 * the one definition of the contract.
 */
import type { Finding, QueueReport, QueueStatus } from './report-schema.js';

export type {
  Finding,
  FindingState,
  Observation,
  QueueReport,
  QueueStatus,
  Report,
  ReportError,
  UnknownRule,
} from './report-schema.js';

const STATUS_RANK: Record<QueueStatus, number> = { critical: 5, warning: 4, pending: 3, unknown: 2, standby: 1, ok: 0 };

/** Whether a finding fires (its condition held for the rule's whole `for`); pending ones do not. */
export function isFiring(finding: Finding): boolean {
  return finding.state !== 'pending';
}

/** Worst first: critical, warning, pending, unknown, standby, ok; then by target and name. */
export function compareQueues(a: QueueReport, b: QueueReport): number {
  return (
    STATUS_RANK[b.status] - STATUS_RANK[a.status] ||
    a.queue.target.localeCompare(b.queue.target) ||
    (a.queue.name ?? '').localeCompare(b.queue.name ?? '') ||
    (a.queue.controller ?? '').localeCompare(b.queue.controller ?? '')
  );
}
