/**
 * The report as text for people: one block per queue, worst first, evidence with units, the cause, the fix
 * and the runbook link. Healthy queues get one line each. A queue's observations follow its findings as
 * `note:` lines, marked as what they are: suggestions, not findings.
 */

import { RULES } from './catalog.js';
import { formatValue } from './format.js';
import { type Finding, isFiring, type QueueReport, type Report } from './report.js';
import { SIGNAL_BY_ID } from './signals.js';

const STATUS_MARK: Record<QueueReport['status'], string> = {
  critical: 'CRITICAL',
  warning: 'WARNING',
  pending: 'PENDING',
  unknown: 'UNKNOWN',
  standby: 'STANDBY',
  ok: 'OK',
};

export function renderTextReport(report: Report): string {
  const lines: string[] = [];
  const problems = report.queues.filter((q) => q.findings.some(isFiring)).length;
  const counted = [`${problems} with findings`];
  for (const status of ['pending', 'unknown'] as const) {
    const n = report.queues.filter((q) => q.status === status).length;
    if (n > 0) counted.push(`${n} ${status}`);
  }
  lines.push(
    `workqueue-doctor: ${report.queues.length} queue${report.queues.length === 1 ? '' : 's'}, ${counted.join(', ')}, at ${report.evaluatedAt} (window ${report.window})`,
  );
  for (const queue of report.queues) {
    lines.push('');
    lines.push(`${STATUS_MARK[queue.status]}  ${queueTitle(queue)}`);
    if (queue.findings.length === 0) lines.push(`  ${quietLine(queue)}`);
    for (const finding of queue.findings) {
      lines.push(`  ${finding.rule} (${findingState(finding)})`);
      lines.push(`    ${finding.summary}`);
      lines.push('    evidence:');
      // One column of values per finding: at least 32 wide, wider where a title is longer.
      const titles = Object.keys(finding.evidence).map(evidenceTitle);
      const width = Math.max(32, ...titles.map((title) => title.length));
      for (const [id, value] of Object.entries(finding.evidence)) {
        lines.push(`      ${evidenceTitle(id).padEnd(width)} ${formatValue(value)}`);
      }
      lines.push(`    cause:   ${finding.cause}`);
      lines.push(`    fix:     ${finding.fix}`);
      lines.push(`    runbook: ${finding.runbook}`);
    }
    for (const unknown of queue.unknown ?? []) lines.push(`  unknown: ${unknown.rule}: ${unknown.reason}`);
    if (queue.observations.length > 0) {
      lines.push('  observations (what the metrics suggest but cannot prove; not findings):');
      for (const observation of queue.observations) lines.push(`    note: ${observation.id}: ${observation.summary}`);
    }
  }
  if (report.errors.length > 0) {
    lines.push('');
    lines.push('errors:');
    for (const error of report.errors) lines.push(`  ${error.target}: ${error.code}: ${error.message}`);
  }
  return `${lines.join('\n')}\n`;
}

const DERIVED_TITLES: ReadonlyMap<string, string> = new Map(
  RULES.flatMap((rule) => Object.entries(rule.derivedTitles ?? {})),
);

/** A signal's or a derived value's title; the id itself when neither knows it. */
export function evidenceTitle(id: string): string {
  return SIGNAL_BY_ID.get(id)?.title ?? DERIVED_TITLES.get(id) ?? id;
}

function queueTitle(queue: QueueReport): string {
  const name = queue.queue.name ?? '(no queue)';
  const controller =
    queue.queue.controller !== null && queue.queue.controller !== queue.queue.name
      ? ` controller=${queue.queue.controller}`
      : '';
  return `${name}${controller}  [${queue.queue.target}]`;
}

function quietLine(queue: QueueReport): string {
  if (queue.status === 'standby') return 'standby replica (not the leader): no queues by design';
  const facts = quietFacts(queue).join(', ');
  return queue.status === 'unknown' ? `not enough data yet: ${facts}` : facts;
}

/** `warning, since …` for a firing finding; `pending warning, since …, fires at …` for a pending one. */
function findingState(finding: Finding): string {
  const since = finding.since === null ? '' : `, since ${finding.since}`;
  if (isFiring(finding)) return `${finding.severity}${since}`;
  return `pending ${finding.severity}${since}${finding.firesAt === undefined ? '' : `, fires at ${finding.firesAt} if it keeps holding`}`;
}

/** What a queue without findings is doing, in a few words each (the text report and the page). */
export function quietFacts(queue: QueueReport): string[] {
  const s = queue.signals;
  return [
    `depth ${formatValue(s.depth)}`,
    `adds ${formatValue(s.addRate)}`,
    `sync mean ${formatValue(s.workDurationMean)}`,
    `busy ${formatValue(s.busyWorkers)}`,
  ];
}
