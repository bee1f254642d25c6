/**
 * `diagnose --fail-on`: what makes the exit code non-zero. A comma-separated list of:
 * - `warning` or `critical`: the lowest severity of a firing finding that counts (exit 1); `warning` when
 *   neither is given;
 * - `pending`: pending findings at or above that severity count too (exit 1);
 * - `unknown`: a rule that could not be judged for lack of data counts (exit 3, when no finding counts).
 * The default, `warning,unknown`, never says "ok" without the data to say it.
 */
import type { Report } from '../diagnosis/report.js';
import { isFiring } from '../diagnosis/report.js';
import { EXIT, UsageError } from './exit-codes.js';

export const FAIL_ON_TERMS = ['warning', 'critical', 'pending', 'unknown'] as const;
export const DEFAULT_FAIL_ON = 'warning,unknown';

export type FailOn = {
  readonly severity: 'warning' | 'critical';
  readonly pending: boolean;
  readonly unknown: boolean;
};

export function parseFailOn(text: string): FailOn {
  const terms = text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  for (const term of terms) {
    if (!(FAIL_ON_TERMS as readonly string[]).includes(term)) {
      throw new UsageError(`--fail-on ${text}: unknown term "${term}"; expected a list of ${FAIL_ON_TERMS.join(', ')}`);
    }
  }
  if (terms.length === 0) throw new UsageError(`--fail-on: expected a list of ${FAIL_ON_TERMS.join(', ')}`);
  if (terms.includes('warning') && terms.includes('critical')) {
    throw new UsageError(`--fail-on ${text}: give one of warning or critical (the lowest severity that counts)`);
  }
  return {
    severity: terms.includes('critical') ? 'critical' : 'warning',
    pending: terms.includes('pending'),
    unknown: terms.includes('unknown'),
  };
}

/**
 * The exit code of a report: 1 when a counted finding is there, else 3 when unknown counts and a rule could
 * not be judged, else 2 when nothing could be read at all (only errors), else 0.
 */
export function exitCodeFor(report: Report, failOn: FailOn): number {
  const counted = report.queues.some((q) =>
    q.findings.some(
      (f) => (failOn.severity === 'warning' || f.severity === 'critical') && (isFiring(f) || failOn.pending),
    ),
  );
  if (counted) return EXIT.findings;
  if (report.queues.length === 0 && report.errors.length > 0) return EXIT.usage;
  const unjudged = report.queues.some((q) => q.status === 'unknown' || (q.unknown ?? []).length > 0);
  if (failOn.unknown && unjudged) return EXIT.unknown;
  return EXIT.ok;
}
