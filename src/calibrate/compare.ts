/**
 * Scoring a report against a scenario's ground truth, and the confusion matrix over many runs.
 * A queue passes when every expected diagnosis is found and nothing outside expected ∪ allowed is.
 */

import { isFiring, type QueueReport, type Report } from '../diagnosis/report.js';
import { RULE_IDS, type RuleId } from '../diagnosis/rule.js';
import type { GroundTruth, QueueTruth } from '../simulate/index.js';
import { owedFromMs } from './detection-budget.js';

export type QueueVerdict = {
  readonly scenario: string;
  readonly seed: number;
  /** When the report was judged, in milliseconds since the recording started. */
  readonly elapsedMs: number;
  readonly name: string | null;
  readonly controller: string | null;
  readonly expected: readonly RuleId[];
  readonly allowed: readonly RuleId[];
  readonly found: readonly RuleId[];
  readonly missed: readonly RuleId[];
  readonly unexpected: readonly RuleId[];
  /** Problems other than rules: a queue absent from the report, a standby replica not reported as standby. */
  readonly problems: readonly string[];
  readonly pass: boolean;
  /** Whether this verdict could have failed by a miss: the truth in force expected something. */
  readonly canMiss: boolean;
  /** Whether it could have failed by a false alarm: some rule was neither expected nor allowed. */
  readonly canFalseAlarm: boolean;
};

/**
 * Scores `report`, made `elapsedMs` after the recording started, against the truth in force then: expected
 * diagnoses are only allowed until their detection budgets have passed (`expectedFrom`), allowed ones become
 * unexpected after `allowedUntilMs`.
 */
export function compareWithTruth(report: Report, truth: GroundTruth, elapsedMs: number): QueueVerdict[] {
  const verdicts: QueueVerdict[] = [];
  const matched = new Set<QueueReport>();
  for (const queueTruth of truth.queues) {
    const entries = report.queues.filter((q) => matches(q, queueTruth));
    for (const e of entries) matched.add(e);
    verdicts.push(verdictFor(truth, truthAt(queueTruth, elapsedMs), entries, elapsedMs));
  }
  // Findings on queues the truth does not know are false positives too.
  for (const entry of report.queues) {
    const found = entry.findings.filter(isFiring).map((f) => f.rule);
    if (matched.has(entry) || found.length === 0) continue;
    verdicts.push({
      scenario: truth.scenario,
      seed: truth.parameters.seed,
      elapsedMs,
      name: entry.queue.name,
      controller: entry.queue.controller,
      expected: [],
      allowed: [],
      found,
      missed: [],
      unexpected: found,
      problems: ['a queue the ground truth does not know'],
      pass: false,
      canMiss: false,
      canFalseAlarm: true,
    });
  }
  return verdicts;
}

function matches(entry: QueueReport, truth: QueueTruth): boolean {
  if (truth.name === null) return entry.queue.name === null;
  return entry.queue.name === truth.name && (truth.controller === null || entry.queue.controller === truth.controller);
}

/**
 * When the expected diagnoses of `queue` must be present: the latest of what each one's detection budget allows
 * past the onset and past the cause (`DETECTION_BUDGETS`, the product's promise, not read from the rules).
 */
export function expectedFrom(queue: QueueTruth): number {
  const onset = queue.onsetMs ?? 0;
  const cause = queue.causeMs ?? onset;
  return Math.max(onset, ...queue.expected.map((id) => owedFromMs(id, onset, cause)));
}

/** The truth of `queue` in force `elapsedMs` after the start. */
export function truthAt(queue: QueueTruth, elapsedMs: number): QueueTruth {
  const building = queue.expected.length > 0 && elapsedMs < expectedFrom(queue);
  const cleared = queue.allowedUntilMs !== undefined && elapsedMs >= queue.allowedUntilMs;
  if (!building && !cleared) return queue;
  return {
    ...queue,
    expected: building ? [] : queue.expected,
    allowed: [...(cleared ? [] : queue.allowed), ...(building ? queue.expected : [])],
  };
}

function verdictFor(
  truth: GroundTruth,
  queue: QueueTruth,
  entries: readonly QueueReport[],
  elapsedMs: number,
): QueueVerdict {
  const found = [...new Set(entries.flatMap((e) => e.findings.filter(isFiring).map((f) => f.rule)))];
  const expected = queue.expected as readonly RuleId[];
  const allowed = queue.allowed as readonly RuleId[];
  const missed = expected.filter((id) => !found.includes(id));
  const unexpected = found.filter((id) => !expected.includes(id) && !allowed.includes(id));
  const problems: string[] = [];
  if (entries.length === 0 && expected.length > 0) problems.push('queue not in the report');
  if (queue.status === 'standby' && !entries.some((e) => e.status === 'standby')) {
    problems.push(`standby replica reported as ${entries.map((e) => e.status).join(', ') || 'nothing'}`);
  }
  return {
    scenario: truth.scenario,
    seed: truth.parameters.seed,
    elapsedMs,
    name: queue.name,
    controller: queue.controller,
    expected,
    allowed,
    found,
    missed,
    unexpected,
    problems,
    pass: missed.length === 0 && unexpected.length === 0 && problems.length === 0,
    canMiss: expected.length > 0,
    canFalseAlarm: RULE_IDS.some((id) => !expected.includes(id) && !allowed.includes(id)),
  };
}

export type RuleScore = {
  readonly rule: RuleId;
  readonly truePositives: number;
  readonly falsePositives: number;
  readonly falseNegatives: number;
  /** null when the rule never fired. */
  readonly precision: number | null;
  /** null when the rule was never expected. */
  readonly recall: number | null;
};

/** Per rule: a finding in `expected` is a true positive, outside expected ∪ allowed a false positive. */
export function scoreRules(verdicts: readonly QueueVerdict[]): RuleScore[] {
  return RULE_IDS.map((rule) => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (const v of verdicts) {
      const found = v.found.includes(rule);
      if (v.expected.includes(rule)) {
        if (found) tp++;
        else fn++;
      } else if (found && !v.allowed.includes(rule)) fp++;
    }
    return {
      rule,
      truePositives: tp,
      falsePositives: fp,
      falseNegatives: fn,
      precision: tp + fp === 0 ? null : tp / (tp + fp),
      recall: tp + fn === 0 ? null : tp / (tp + fn),
    };
  });
}

/** Column titles that are not the id without its `Workqueue` prefix (which would not fit in 10 characters). */
const COLUMN_ABBREVIATIONS: Readonly<Partial<Record<RuleId, string>>> = {
  WorkqueueStuckWorker: 'Stuck',
  WorkqueuePersistentFailures: 'Failures',
  WorkqueueNotObservable: 'NotObs',
};

function columnTitle(id: RuleId): string {
  return COLUMN_ABBREVIATIONS[id] ?? id.replace(/^Workqueue/, '');
}

/** Scenario × rule: how many (queue, seed) runs showed each rule, marked by what the truth says of it. */
export function confusionMatrix(verdicts: readonly QueueVerdict[]): string {
  const rows = new Map<string, QueueVerdict[]>();
  for (const v of verdicts) {
    const label = v.name === null ? v.scenario : `${v.scenario}/${v.name}`;
    rows.set(label, [...(rows.get(label) ?? []), v]);
  }
  const width = Math.max(24, ...[...rows.keys()].map((k) => k.length));
  const header = ['scenario/queue'.padEnd(width), ...RULE_IDS.map((id) => columnTitle(id).padStart(10)), '  pass'].join(
    '',
  );
  const lines = [header];
  for (const [label, vs] of rows) {
    const cells = RULE_IDS.map((rule) => {
      const count = vs.filter((v) => v.found.includes(rule)).length;
      const first = vs[0];
      const mark = first?.expected.includes(rule) ? '*' : first?.allowed.includes(rule) ? '~' : ' ';
      return `${count}/${vs.length}${mark}`.padStart(10);
    });
    lines.push([label.padEnd(width), ...cells, `  ${vs.filter((v) => v.pass).length}/${vs.length}`].join(''));
  }
  lines.push('');
  lines.push('cells: runs showing the rule / runs; * expected, ~ allowed, blank: must not fire');
  return lines.join('\n');
}

/** How many verdicts could have failed, and how: a check that cannot fail proves nothing. */
export function failability(verdicts: readonly QueueVerdict[]): {
  total: number;
  canMiss: number;
  canFalseAlarm: number;
} {
  return {
    total: verdicts.length,
    canMiss: verdicts.filter((v) => v.canMiss).length,
    canFalseAlarm: verdicts.filter((v) => v.canFalseAlarm).length,
  };
}
