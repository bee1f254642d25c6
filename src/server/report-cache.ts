/**
 * The latest report as JSON, serialized once per evaluation (report-pieces.ts), assembled once per filter and
 * compressed at most once per encoding (`CachedBody`), so that serving it costs a map lookup. A new report (a new
 * object from the service) empties the cache. Filtered reports and single queues are kept in `BodyCache`s bounded
 * in entries and bytes (service/answer-budget.ts), least recently used first out: a client rotating filters makes the
 * service assemble and compress more often, never hold more.
 *
 * Serialization is `JSON.stringify` of the report as the engine built it: the schema allows fields to be
 * added, so nothing is dropped on the way out.
 */
import type { QueueReport, QueueStatus, Report } from '../diagnosis/report.js';
import type { RuleId } from '../diagnosis/rule.js';
import { QUEUE_BODIES, REPORT_BODIES } from '../service/answer-budget.js';
import { BodyCache, type BodyCacheLimits } from './body-cache.js';
import { CachedBody } from './cached-body.js';
import { assemble, type ReportPieces, reportPieces } from './report-pieces.js';

export type ReportFilter = {
  /** Keep queues with one of these statuses; empty or absent: all. */
  readonly status?: readonly QueueStatus[];
  /** Keep queues with a finding of one of these rules; empty or absent: all. */
  readonly rule?: readonly RuleId[];
};

export interface ReportCache {
  /** The (filtered) report, or undefined before the first report. */
  report(filter?: ReportFilter): CachedBody | undefined;
  /** One queue; undefined before the first report, null when the report has no such queue. */
  queue(id: string): CachedBody | null | undefined;
  /** What the cache holds now: bodies and their `heldBytesBound`, of filtered reports and of single queues. */
  held(): { readonly reports: HeldBodies; readonly queues: HeldBodies };
}

export type HeldBodies = { readonly entries: number; readonly bytes: number };

export type ReportCacheLimits = {
  /** Filtered reports, the whole report included. */
  readonly reports: BodyCacheLimits;
  /** Single queues. */
  readonly queues: BodyCacheLimits;
};

export const DEFAULT_REPORT_CACHE_LIMITS: ReportCacheLimits = { reports: REPORT_BODIES, queues: QUEUE_BODIES };

export function createReportCache(
  current: () => Report | undefined,
  limits: ReportCacheLimits = DEFAULT_REPORT_CACHE_LIMITS,
): ReportCache {
  let pieces: ReportPieces | undefined;
  const bodies = new BodyCache<string>(limits.reports);
  const queueBodies = new BodyCache<string>(limits.queues);

  const sync = (): ReportPieces | undefined => {
    const report = current();
    if (report !== pieces?.report) {
      pieces = report === undefined ? undefined : reportPieces(report);
      bodies.clear();
      queueBodies.clear();
    }
    return pieces;
  };

  return {
    held: () => ({
      reports: { entries: bodies.size, bytes: bodies.heldBytesBound() },
      queues: { entries: queueBodies.size, bytes: queueBodies.heldBytesBound() },
    }),
    report(filter = {}) {
      const current = sync();
      if (current === undefined) return undefined;
      const key = filterKey(filter);
      let body = bodies.get(key);
      if (body === undefined) {
        body = new CachedBody(assemble(current, filterPredicate(filter)));
        bodies.set(key, body);
      }
      return body;
    },
    queue(id) {
      const current = sync();
      if (current === undefined) return undefined;
      let body = queueBodies.get(id);
      if (body !== undefined) return body;
      const bytes = current.byId.get(id);
      if (bytes === undefined) return null;
      body = new CachedBody(bytes);
      queueBodies.set(id, body);
      return body;
    },
  };
}

/** Whether a queue passes `filter` (see `ReportFilter`). */
export function filterPredicate(filter: ReportFilter): (queue: QueueReport) => boolean {
  const statuses = filter.status !== undefined && filter.status.length > 0 ? new Set(filter.status) : undefined;
  const rules = filter.rule !== undefined && filter.rule.length > 0 ? new Set(filter.rule) : undefined;
  return (q) =>
    (statuses === undefined || statuses.has(q.status)) &&
    (rules === undefined || q.findings.some((f) => rules.has(f.rule)));
}

function filterKey(filter: ReportFilter): string {
  const status = [...new Set(filter.status ?? [])].sort().join(',');
  const rule = [...new Set(filter.rule ?? [])].sort().join(',');
  return `${status}|${rule}`;
}
