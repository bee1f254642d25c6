/**
 * Which charts explain a finding, read from its rule's definition with the thresholds in force for the queue: the
 * signals the condition compares with a threshold (each drawn with its threshold line), the signals it compares
 * with one another (charted together: API writes beside adds), and the signals the rule's text says to look at to
 * confirm it. Nothing here names a rule, a signal or a threshold value: a new rule gets its charts from its own
 * definition.
 *
 * Contract:
 * - A comparison counts when the condition relies on it: the right side of an `unless` (an exception to the rule)
 *   does not, nor does anything inside a signal's own expression.
 * - Charts group signals of one unit; signals compared with one another share a chart. Signals are ordered, and
 *   charts too, by the rule's evidence order (its order of importance), signals outside the evidence last.
 * - At most `MAX_SERIES_PER_CHART` signals per chart (compared signals are never split) and
 *   `MAX_CHARTS_PER_FINDING` charts per finding, the most important kept.
 * - A threshold line is drawn on the chart of each signal compared with it; one threshold compared with several
 *   signals of a chart is one line.
 */
import type { RuleSettings } from '../../diagnosis/catalog.js';
import { conditionWith, type ThresholdSpec } from '../../diagnosis/rule.js';
import { SIGNAL_BY_ID } from '../../diagnosis/signals.js';
import type { Unit } from '../../diagnosis/units.js';
import { formatThreshold, signalOf, signalsIn } from '../../generate/condition-analysis.js';
import type { ComparisonOp, Expr } from '../../promql/expr.js';
import { MAX_CHARTS_PER_FINDING } from '../../service/queue-series.js';

/** Series one chart can carry and stay readable (each has its own colour and dash). */
export const MAX_SERIES_PER_CHART = 5;

/** A threshold a chart draws as a horizontal line. */
export type ChartThreshold = {
  /** The threshold's name in the rule (`minAddRate`); undefined for a plain number in the condition. */
  readonly name?: string;
  readonly op: ComparisonOp;
  readonly value: number;
  /** The signals of the chart compared with it. */
  readonly signals: readonly string[];
  /** `minAddRate ≥ 1/s`. */
  readonly label: string;
};

export type FindingChart = {
  readonly unit: Unit;
  /** Signal ids, most important first. */
  readonly signals: readonly string[];
  readonly thresholds: readonly ChartThreshold[];
};

/** What a rule's condition relies on: signals compared with a threshold, and signals compared with one another. */
export type ConditionReading = {
  readonly comparisons: readonly {
    readonly signal: string;
    readonly op: ComparisonOp;
    readonly value: number;
    readonly name?: string;
  }[];
  /** Sets of signals compared with one another (transitively). */
  readonly relations: readonly ReadonlySet<string>[];
};

const COMPARISONS: ReadonlySet<string> = new Set(['>', '<', '>=', '<=', '==', '!=']);
const OP_SIGN: Readonly<Record<ComparisonOp, string>> = {
  '>': '>',
  '<': '<',
  '>=': '≥',
  '<=': '≤',
  '==': '=',
  '!=': '≠',
};

/** The comparisons `condition` relies on (see the module contract). */
export function readCondition(condition: Expr): ConditionReading {
  const comparisons: ConditionReading['comparisons'][number][] = [];
  const groups: Set<string>[] = [];
  const visit = (e: Expr): void => {
    if (e.kind !== 'binary') return;
    if (e.op === 'unless') {
      visit(e.lhs);
      return;
    }
    if (!COMPARISONS.has(e.op)) {
      visit(e.lhs);
      visit(e.rhs);
      return;
    }
    const compared = signalOf(e.lhs);
    if (compared !== undefined && (e.rhs.kind === 'number' || e.rhs.kind === 'threshold')) {
      const name = e.rhs.kind === 'threshold' ? { name: e.rhs.name } : {};
      comparisons.push({ signal: compared.id, op: e.op as ComparisonOp, value: e.rhs.value, ...name });
      return;
    }
    const related = new Set([...signalsIn(e.lhs), ...signalsIn(e.rhs)]);
    if (related.size < 2) return;
    // Merge with every group sharing a signal: comparisons chain (retries ≤ errors, errors ≥ adds).
    const merged = groups.filter((g) => [...g].some((s) => related.has(s)));
    for (const g of merged) {
      for (const s of g) related.add(s);
      groups.splice(groups.indexOf(g), 1);
    }
    groups.push(related);
  };
  visit(condition);
  return { comparisons, relations: groups };
}

/** What the page shows of a rule with the thresholds in force: its charts and how its evidence reads. */
export type RuleExplanation = {
  readonly charts: readonly FindingChart[];
  /** Every signal the charts draw. */
  readonly chartedSignals: readonly string[];
  /** The signals the condition relies on: compared with a threshold or with one another. */
  readonly decisive: ReadonlySet<string>;
  /** By signal: the thresholds it is compared with, as `≥ 1/s (minAddRate)`. */
  readonly thresholdsBySignal: ReadonlyMap<string, readonly string[]>;
};

const CACHE = new Map<string, RuleExplanation>();

/** How a finding of `settings`' rule is explained, computed once per rule and thresholds in force. */
export function explainRule(settings: RuleSettings): RuleExplanation {
  const key = `${settings.rule.id} ${JSON.stringify(settings.thresholds)}`;
  let explanation = CACHE.get(key);
  if (explanation === undefined) {
    explanation = explanationOf(settings);
    // The thresholds in force are few (the configuration's), but keep the cache bounded whatever calls it.
    if (CACHE.size > 1000) CACHE.clear();
    CACHE.set(key, explanation);
  }
  return explanation;
}

function explanationOf(settings: RuleSettings): RuleExplanation {
  const reading = readCondition(conditionWith(settings.rule, settings.thresholds));
  const charts = chartsOf(settings, reading);
  const thresholdsBySignal = new Map<string, string[]>();
  for (const c of reading.comparisons) {
    const text = `${OP_SIGN[c.op]} ${formatValueOf(c, settings.rule.thresholds, c.signal)}${c.name === undefined ? '' : ` (${c.name})`}`;
    thresholdsBySignal.set(c.signal, [...(thresholdsBySignal.get(c.signal) ?? []), text]);
  }
  return {
    charts,
    chartedSignals: [...new Set(charts.flatMap((c) => c.signals))],
    decisive: new Set([...reading.comparisons.map((c) => c.signal), ...reading.relations.flatMap((r) => [...r])]),
    thresholdsBySignal,
  };
}

function chartsOf(settings: RuleSettings, reading: ConditionReading): FindingChart[] {
  const { rule } = settings;
  const rank = (id: string): number => {
    const at = (rule.evidence as readonly string[]).indexOf(id);
    return at < 0 ? Number.MAX_SAFE_INTEGER : at;
  };
  const byRank = (a: string, b: string): number => rank(a) - rank(b);
  const unitOf = (id: string): Unit | undefined => SIGNAL_BY_ID.get(id)?.unit;
  const known = (id: string): boolean => unitOf(id) !== undefined;

  // Signals compared with one another first (they are never split), then the others, by importance.
  const groups: { unit: Unit; signals: string[] }[] = [];
  for (const related of reading.relations) {
    const byUnit = new Map<Unit, string[]>();
    for (const id of [...related].filter(known).sort(byRank)) {
      const unit = unitOf(id) as Unit;
      byUnit.set(unit, [...(byUnit.get(unit) ?? []), id]);
    }
    for (const [unit, signals] of byUnit) groups.push({ unit, signals: signals.slice(0, MAX_SERIES_PER_CHART) });
  }
  const others = [
    ...reading.comparisons.map((c) => c.signal),
    ...rule.text.confirm.flatMap((c) => c.signals as readonly string[]),
  ].filter(known);
  for (const id of [...new Set(others)].sort(byRank)) {
    if (groups.some((g) => g.signals.includes(id))) continue;
    const unit = unitOf(id) as Unit;
    const joined = groups.find((g) => g.unit === unit && g.signals.length < MAX_SERIES_PER_CHART);
    if (joined !== undefined) joined.signals.push(id);
    else groups.push({ unit, signals: [id] });
  }
  for (const g of groups) g.signals.sort(byRank);
  groups.sort((a, b) => rank(a.signals[0] ?? '') - rank(b.signals[0] ?? ''));

  return groups.slice(0, MAX_CHARTS_PER_FINDING).map((g) => ({
    unit: g.unit,
    signals: g.signals,
    thresholds: chartThresholds(g.signals, reading, rule.thresholds),
  }));
}

function chartThresholds(
  signals: readonly string[],
  reading: ConditionReading,
  specs: Readonly<Record<string, ThresholdSpec>>,
): ChartThreshold[] {
  const lines = new Map<string, { name?: string; op: ComparisonOp; value: number; signals: string[] }>();
  for (const c of reading.comparisons) {
    if (!signals.includes(c.signal)) continue;
    const key = `${c.name ?? ''} ${c.op} ${c.value}`;
    const line = lines.get(key) ?? { ...c, signals: [] };
    if (!line.signals.includes(c.signal)) line.signals.push(c.signal);
    lines.set(key, line);
  }
  return [...lines.values()].map((line) => ({
    ...line,
    label: `${line.name ?? SIGNAL_BY_ID.get(line.signals[0] ?? '')?.title ?? ''} ${OP_SIGN[line.op]} ${formatValueOf(
      line,
      specs,
      line.signals[0] ?? '',
    )}`,
  }));
}

/** A compared value in its threshold's unit, or in the signal's when it is a plain number. */
function formatValueOf(
  c: { readonly name?: string; readonly value: number },
  specs: Readonly<Record<string, ThresholdSpec>>,
  signal: string,
): string {
  const spec = c.name === undefined ? undefined : specs[c.name];
  const unit = SIGNAL_BY_ID.get(signal)?.unit ?? 'items';
  return formatThreshold(c.value, spec ?? { default: c.value, unit, description: '' });
}
