/**
 * Scoring a report against a scenario's ground truth, and the confusion matrix over many runs.
 * A queue passes when every expected diagnosis is found and nothing outside expected ∪ allowed is.
 */
import type { QueueReport, Report } from '../diagnosis/report.js';
import { RULE_IDS, type RuleId } from '../diagnosis/rule.js';
import type { GroundTruth, QueueTruth } from '../simulate/index.js';

export type QueueVerdict = {
  readonly scenario: string;
  readonly seed: number;
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
};

export function compareWithTruth(report: Report, truth: GroundTruth): QueueVerdict[] {
  const verdicts: QueueVerdict[] = [];
  const matched = new Set<QueueReport>();
  for (const queueTruth of truth.queues) {
    const entries = report.queues.filter((q) => matches(q, queueTruth));
    for (const e of entries) matched.add(e);
    verdicts.push(verdictFor(truth, queueTruth, entries));
  }
  // Findings on queues the truth does not know are false positives too.
  for (const entry of report.queues) {
    if (matched.has(entry) || entry.findings.length === 0) continue;
    const found = entry.findings.map((f) => f.rule);
    verdicts.push({
      scenario: truth.scenario,
      seed: truth.parameters.seed,
      name: entry.queue.name,
      controller: entry.queue.controller,
      expected: [],
      allowed: [],
      found,
      missed: [],
      unexpected: found,
      problems: ['a queue the ground truth does not know'],
      pass: false,
    });
  }
  return verdicts;
}

function matches(entry: QueueReport, truth: QueueTruth): boolean {
  if (truth.name === null) return entry.queue.name === null;
  return entry.queue.name === truth.name && (truth.controller === null || entry.queue.controller === truth.controller);
}

function verdictFor(truth: GroundTruth, queue: QueueTruth, entries: readonly QueueReport[]): QueueVerdict {
  const found = [...new Set(entries.flatMap((e) => e.findings.map((f) => f.rule)))];
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
    name: queue.name,
    controller: queue.controller,
    expected,
    allowed,
    found,
    missed,
    unexpected,
    problems,
    pass: missed.length === 0 && unexpected.length === 0 && problems.length === 0,
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

/** Scenario × rule: how many (queue, seed) runs showed each rule, marked by what the truth says of it. */
export function confusionMatrix(verdicts: readonly QueueVerdict[]): string {
  const short: Record<RuleId, string> = {
    WorkqueueBacklog: 'Backlog',
    WorkqueueHotLoop: 'HotLoop',
    WorkqueueSlowWork: 'SlowWork',
    WorkqueueStuckWorker: 'Stuck',
    WorkqueuePersistentFailures: 'Failures',
    WorkqueueSaturated: 'Saturated',
    WorkqueueNotObservable: 'NotObs',
  };
  const rows = new Map<string, QueueVerdict[]>();
  for (const v of verdicts) {
    const label = v.name === null ? v.scenario : `${v.scenario}/${v.name}`;
    rows.set(label, [...(rows.get(label) ?? []), v]);
  }
  const width = Math.max(24, ...[...rows.keys()].map((k) => k.length));
  const header = ['scenario/queue'.padEnd(width), ...RULE_IDS.map((id) => short[id].padStart(10)), '  pass'].join('');
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
