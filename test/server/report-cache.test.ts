/**
 * The report cache is bounded in bytes as well as entries: a client rotating through many distinct `?status`/`?rule`
 * filters, each asked for in every encoding, never makes it hold more than its byte bound; the least recently used
 * filter goes first. Checked on the bytes the cache holds (`held()`), not on the process's memory.
 */
import { describe, expect, it } from 'vitest';
import type { QueueStatus, Report } from '../../src/diagnosis/report.js';
import { RULE_IDS, type RuleId } from '../../src/diagnosis/rule.js';
import { BodyCache } from '../../src/server/body-cache.js';
import { CachedBody } from '../../src/server/cached-body.js';
import {
  createReportCache,
  DEFAULT_REPORT_CACHE_LIMITS,
  filterPredicate,
  type ReportFilter,
} from '../../src/server/report-cache.js';
import { REPORT_BODIES } from '../../src/service/answer-budget.js';
import { mixedReport } from './helpers.js';

const STATUSES: readonly QueueStatus[] = ['critical', 'warning', 'pending', 'unknown', 'standby', 'ok'];
const DISTINCT_FILTERS = 248;

/** The `n`th of 8,192 distinct filters: a subset of the statuses and one of the rules. */
function filter(n: number): ReportFilter {
  const status = STATUSES.filter((_s, bit) => (n >> bit) & 1);
  const rule = RULE_IDS.filter((_r, bit) => (n >> (STATUSES.length + bit)) & 1) as RuleId[];
  return { status, rule };
}

/** Serves `filter` from `cache` in all three encodings, as 248 clients asking one after the other would. */
async function serveAllEncodings(body: CachedBody | undefined): Promise<void> {
  if (body === undefined) throw new Error('no report');
  await body.encoded('br');
  await body.encoded('gzip');
}

describe('the report cache', () => {
  it('stays within its byte and entry bounds over 248 distinct filters in every encoding', async () => {
    const report = await mixedReport();
    // A bound that a handful of filtered reports fill, so that bytes, not entries, decide what is kept.
    const maxBytes = 4 * Buffer.byteLength(JSON.stringify(report));
    const cache = createReportCache(() => report, {
      ...DEFAULT_REPORT_CACHE_LIMITS,
      reports: { maxEntries: REPORT_BODIES.maxEntries, maxBytes },
    });
    let evictedForBytes = 0;
    for (let n = 0; n < DISTINCT_FILTERS; n++) {
      const before = cache.held().reports.entries;
      await serveAllEncodings(cache.report(filter(n)));
      const held = cache.held().reports;
      expect(held.entries).toBeLessThanOrEqual(REPORT_BODIES.maxEntries);
      expect(held.bytes).toBeLessThanOrEqual(maxBytes);
      // A new filter that did not add an entry below the entry bound made room by bytes.
      if (held.entries <= before && before < REPORT_BODIES.maxEntries) evictedForBytes++;
    }
    expect(evictedForBytes).toBeGreaterThan(0);
  });

  it('stays within the default bounds, and answers each filter with the JSON of its queues', async () => {
    const report = await mixedReport();
    const cache = createReportCache(() => report);
    for (let n = 0; n < DISTINCT_FILTERS; n++) {
      const f = filter(n);
      const body = cache.report(f);
      await serveAllEncodings(body);
      const expected = { ...report, queues: report.queues.filter(filterPredicate(f)) };
      expect(body?.bytes.toString('utf8')).toBe(JSON.stringify(expected));
      for (const q of expected.queues) {
        if (f.status?.length) expect(f.status).toContain(q.status);
        if (f.rule?.length) expect(q.findings.some((finding) => f.rule?.includes(finding.rule))).toBe(true);
      }
      const held = cache.held().reports;
      expect(held.entries).toBeLessThanOrEqual(REPORT_BODIES.maxEntries);
      expect(held.bytes).toBeLessThanOrEqual(REPORT_BODIES.maxBytes);
    }
  });

  it('answers a single queue with its JSON, and an unknown one with null', async () => {
    const report = await mixedReport();
    const cache = createReportCache(() => report);
    for (const q of report.queues) expect(cache.queue(q.id)?.bytes.toString('utf8')).toBe(JSON.stringify(q));
    expect(cache.queue('no-such-queue')).toBeNull();
    expect(cache.held().queues.entries).toBe(report.queues.length);
  });

  it('keeps the most recently used filter and starts over with a new report', async () => {
    const report = await mixedReport();
    let current: Report = report;
    const cache = createReportCache(() => current, {
      ...DEFAULT_REPORT_CACHE_LIMITS,
      reports: { maxEntries: 3, maxBytes: Number.MAX_SAFE_INTEGER },
    });
    const first = cache.report(filter(1));
    cache.report(filter(2));
    cache.report(filter(3));
    expect(cache.report(filter(1))).toBe(first);
    cache.report(filter(4));
    // filter 2 was the least recently used.
    expect(cache.report(filter(1))).toBe(first);
    expect(cache.held().reports.entries).toBe(3);
    current = { ...report };
    expect(cache.report(filter(1))).not.toBe(first);
    expect(cache.held().reports.entries).toBe(1);
  });
});

describe('BodyCache', () => {
  it('does not keep a body larger than its byte bound, and counts compressed forms once made', async () => {
    const cache = new BodyCache<string>({ maxEntries: 10, maxBytes: 10_000 });
    const big = new CachedBody('x'.repeat(5_000));
    cache.set('big', big);
    expect(cache.size).toBe(0);
    const small = new CachedBody(JSON.stringify({ text: 'y'.repeat(2_000) }));
    // Before compression: three times its bytes; after: its bytes and two small compressed forms.
    expect(small.heldBytesBound).toBe(3 * small.bytes.length);
    await small.encoded('br');
    await small.encoded('gzip');
    expect(small.heldBytesBound).toBeLessThan(1.2 * small.bytes.length);
    cache.set('small', small);
    expect(cache.get('small')).toBe(small);
    expect(cache.heldBytesBound()).toBe(small.heldBytesBound);
  });
});
