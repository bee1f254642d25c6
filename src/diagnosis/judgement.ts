/**
 * Whether a rule could be judged for a queue at the evaluation time. A rule whose condition does not hold says
 * "no problem" only when it read the data it needs; otherwise the queue is `unknown` for that rule, with the
 * reason. (A condition that holds is judged: it is a finding, pending until its `for` has elapsed.)
 *
 * What a rule needs:
 * - data spanning (nine tenths of) the longest range its condition reads: a range function over a partial
 *   window can miss what a full one shows (a backlog that grows over 30 minutes is flat over 2);
 * - the queue's essential signals (average depth and add rate): without them no rule can tell anything of the
 *   queue (too few scrapes, or the work-queue series missing).
 * Families a controller does not expose at all (reconcile errors on a component-base controller) do not make a
 * rule unknown: the evidence shows them as `metric_absent`, and the observations say what that hides.
 */
import { longestRangeOf } from '../promql/expr.js';
import { formatDuration } from '../util/duration.js';
import type { RuleSettings } from './catalog.js';
import type { UnknownRule } from './report.js';
import { conditionWith, type SignalSnapshot } from './rule.js';
import { SPANNED_SHARE } from './signal-building.js';
import { SIGNAL_BY_ID } from './signals.js';

/** Signals without which a queue's health cannot be judged by any rule. */
export const ESSENTIAL_SIGNALS = ['depthAvg', 'addRate'] as const;

/** What the engine knows of the data behind one evaluation. */
export type DataSpan = {
  readonly atMs: number;
  /** The first sample of the source; undefined where the source cannot tell (Prometheus: judged as covered). */
  readonly historyStartMs?: number;
  /** How much history the source keeps (a live history's retention); undefined where it keeps everything. */
  readonly keptMs?: number;
};

/** Each rule's longest range, by rule: its windows are the definition's, whatever thresholds are in force. */
const LONGEST_RANGE = new WeakMap<RuleSettings['rule'], number>();

/** The longest range a rule's condition reads, computed once per rule (not per queue and evaluation). */
function longestRangeOfRule(settings: RuleSettings): number {
  let rangeMs = LONGEST_RANGE.get(settings.rule);
  if (rangeMs === undefined) {
    rangeMs = longestRangeOf(conditionWith(settings.rule, settings.thresholds));
    LONGEST_RANGE.set(settings.rule, rangeMs);
  }
  return rangeMs;
}

/** Why `settings`' rule cannot be judged for a queue with `snapshot`, or undefined when it can. */
export function unjudgedReason(settings: RuleSettings, snapshot: SignalSnapshot, span: DataSpan): string | undefined {
  const missing = ESSENTIAL_SIGNALS.find((id) => snapshot[id]?.value == null);
  if (missing !== undefined) {
    const title = SIGNAL_BY_ID.get(missing)?.title ?? missing;
    return snapshot[missing]?.missing === 'metric_absent'
      ? `series missing: the queue exposes no ${title.toLowerCase()}`
      : `too few scrapes: the ${title.toLowerCase()} has no value yet`;
  }
  const rangeMs = longestRangeOfRule(settings);
  if (span.keptMs !== undefined && keepsTooLittle(settings, span.keptMs)) return retentionShortOf(span.keptMs, rangeMs);
  if (span.historyStartMs === undefined) return undefined;
  const spanMs = Math.max(0, span.atMs - span.historyStartMs);
  if (spanMs >= rangeMs * SPANNED_SHARE) return undefined;
  return `window ${formatDuration(Math.round(spanMs / 1000) * 1000)} is shorter than the rule's range ${formatDuration(rangeMs)} (range ${formatDuration(rangeMs)} + for ${formatDuration(settings.forMs)} before it can fire)`;
}

/** Whether a history kept for `keptMs` never spans the rule's range (nine tenths of it, as a history's start). */
function keepsTooLittle(settings: RuleSettings, keptMs: number): boolean {
  return keptMs < longestRangeOfRule(settings) * SPANNED_SHARE;
}

/**
 * Why a rule is never judged on a history kept for `keptMs`: its windows reach further back than the samples the
 * history keeps, so they are read only in part at every evaluation, however long the service has run.
 */
function retentionShortOf(keptMs: number, rangeMs: number): string {
  return `the history keeps ${formatDuration(keptMs)} (scrape.retention), shorter than the rule's range ${formatDuration(rangeMs)}: keep ${formatDuration(rangeMs)} or more`;
}

/** The enabled queue rules of `settings` whose range a history kept for `keptMs` never spans, with that range. */
export function rulesBeyondKept(
  settings: readonly RuleSettings[],
  keptMs: number,
): Array<{ readonly rule: string; readonly range: string }> {
  return settings
    .filter((s) => s.enabled && s.rule.scope === 'queue' && keepsTooLittle(s, keptMs))
    .map((s) => ({ rule: s.rule.id, range: formatDuration(longestRangeOfRule(s)) }));
}

/** The rules of `settings` without a finding that could not be judged, in the order given. */
export function unjudgedRules(
  settings: readonly RuleSettings[],
  judged: ReadonlySet<string>,
  snapshot: SignalSnapshot,
  span: DataSpan,
): UnknownRule[] {
  const out: UnknownRule[] = [];
  for (const s of settings) {
    if (!s.enabled || s.rule.scope !== 'queue' || judged.has(s.rule.id)) continue;
    const reason = unjudgedReason(s, snapshot, span);
    if (reason !== undefined) out.push({ rule: s.rule.id, reason });
  }
  return out;
}
