/**
 * The order in which an alert shows its evidence: what decides the rule first. Read from the rule's
 * condition, each evidence signal (kept in the rule's `evidence` order within its group) is
 *
 * - decisive: the condition requires it to be high (it is on the growing side of a comparison: `x ≥ …`,
 *   `… ≤ x`) or present (a bare operand of `and`/`or`), e.g. a hot loop's add rate and the writes or errors
 *   that track it, persistent failures' unexplained error ratios and the retries that follow them;
 * - a guard: the condition reads it only as an upper bound or as what must be absent (`x ≤ …`, the right side
 *   of `unless`), e.g. a hot loop's depth staying low;
 * - context: the condition does not read it.
 *
 * The summary shows the decisive signals and the guards compared with a threshold; the description lists
 * decisive, guards, then context.
 */
import type { SignalId } from '../diagnosis/signals.js';
import type { Expr } from '../promql/expr.js';
import { type RuleAnalysis, signalsIn } from './condition-analysis.js';

const GROWING_ON_LEFT: readonly string[] = ['>=', '>'];
const GROWING_ON_RIGHT: readonly string[] = ['<=', '<'];

export type EvidenceOrder = {
  readonly decisive: readonly SignalId[];
  readonly guards: readonly SignalId[];
  readonly context: readonly SignalId[];
};

export function evidenceOrder(analysis: RuleAnalysis): EvidenceOrder {
  const { high } = requirements(analysis.condition);
  const read = signalsIn(analysis.condition);
  const { evidence } = analysis.settings.rule;
  return {
    decisive: evidence.filter((id) => high.has(id)),
    guards: evidence.filter((id) => read.has(id) && !high.has(id)),
    context: evidence.filter((id) => !read.has(id)),
  };
}

/** At most this many values in a summary. */
export const SUMMARY_VALUES = 5;

/**
 * The signals of the summary, at most `SUMMARY_VALUES`: decisive, then the guards the condition bounds with a
 * threshold (a hot loop's depth ≤ 20 items; not what `unless` excludes).
 */
export function summarySignals(analysis: RuleAnalysis): SignalId[] {
  const order = evidenceOrder(analysis);
  const { low } = requirements(analysis.condition);
  const bounded = new Set(analysis.lines.map((l) => l.signal));
  const guards = order.guards.filter((id) => low.has(id) && bounded.has(id));
  return [...order.decisive, ...guards].slice(0, SUMMARY_VALUES);
}

/** Every evidence signal, decisive first. */
export function descriptionSignals(analysis: RuleAnalysis): SignalId[] {
  const order = evidenceOrder(analysis);
  return [...order.decisive, ...order.guards, ...order.context];
}

/**
 * The signals `condition` requires high or present (`high`), and those it bounds from above (`low`), both
 * outside the right side of `unless`.
 */
function requirements(condition: Expr): { high: Set<string>; low: Set<string> } {
  const high = new Set<string>();
  const low = new Set<string>();
  const add = (to: Set<string>, e: Expr): void => {
    for (const id of signalsIn(e)) to.add(id);
  };
  const visit = (e: Expr): void => {
    if (e.kind === 'signal') {
      high.add(e.id);
      return;
    }
    if (e.kind !== 'binary') return;
    if (GROWING_ON_LEFT.includes(e.op)) {
      add(high, e.lhs);
      add(low, e.rhs);
    } else if (GROWING_ON_RIGHT.includes(e.op)) {
      add(low, e.lhs);
      add(high, e.rhs);
    } else if (e.op === 'and' || e.op === 'or') {
      visit(e.lhs);
      visit(e.rhs);
    } else if (e.op === 'unless') visit(e.lhs);
  };
  visit(condition);
  return { high, low };
}
