/**
 * The latest report as JSON, serialized once per evaluation and per filter (and compressed at most once
 * per encoding, see `CachedBody`), so that serving it costs a map lookup. A new report (a new object from
 * the service) empties the cache.
 *
 * Serialization is `JSON.stringify` of the report as the engine built it: the schema allows fields to be
 * added, so nothing is dropped on the way out.
 */
import type { QueueReport, QueueStatus, Report } from '../diagnosis/report.js';
import type { RuleId } from '../diagnosis/rule.js';
import { CachedBody } from './cached-body.js';

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
}

/**
 * Distinct filters kept per report; beyond that the cache starts over. Each holds the filtered JSON and up to two
 * compressed forms: at 16, a few megabytes for a 300 KB report.
 */
const MAX_FILTERS = 16;

export function createReportCache(current: () => Report | undefined): ReportCache {
  let cached: Report | undefined;
  let bodies = new Map<string, CachedBody>();
  let queues: Map<string, QueueReport> | undefined;
  let queueBodies = new Map<string, CachedBody>();

  const sync = (): Report | undefined => {
    const report = current();
    if (report !== cached) {
      cached = report;
      bodies = new Map();
      queues = undefined;
      queueBodies = new Map();
    }
    return report;
  };

  return {
    report(filter = {}) {
      const report = sync();
      if (report === undefined) return undefined;
      const key = filterKey(filter);
      let body = bodies.get(key);
      if (body === undefined) {
        body = new CachedBody(JSON.stringify(key === '|' ? report : applyFilter(report, filter)));
        if (bodies.size >= MAX_FILTERS) bodies.clear();
        bodies.set(key, body);
      }
      return body;
    },
    queue(id) {
      const report = sync();
      if (report === undefined) return undefined;
      let body = queueBodies.get(id);
      if (body !== undefined) return body;
      queues ??= new Map(report.queues.map((q) => [q.id, q]));
      const queue = queues.get(id);
      if (queue === undefined) return null;
      body = new CachedBody(JSON.stringify(queue));
      queueBodies.set(id, body);
      return body;
    },
  };
}

export function applyFilter(report: Report, filter: ReportFilter): Report {
  const statuses = filter.status !== undefined && filter.status.length > 0 ? new Set(filter.status) : undefined;
  const rules = filter.rule !== undefined && filter.rule.length > 0 ? new Set(filter.rule) : undefined;
  return {
    ...report,
    queues: report.queues.filter(
      (q) =>
        (statuses === undefined || statuses.has(q.status)) &&
        (rules === undefined || q.findings.some((f) => rules.has(f.rule))),
    ),
  };
}

function filterKey(filter: ReportFilter): string {
  const status = [...new Set(filter.status ?? [])].sort().join(',');
  const rule = [...new Set(filter.rule ?? [])].sort().join(',');
  return `${status}|${rule}`;
}
