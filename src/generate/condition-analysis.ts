/**
 * Reads a rule's condition tree for the generators: which signals it compares with which thresholds (the
 * dashboards' threshold lines), its clauses in words (panel descriptions, runbooks, alert descriptions), and
 * which signal the alert's `$value` carries.
 *
 * The condition is built with the thresholds in force as threshold nodes and reads signals as signal nodes,
 * so the tree itself says which subtree is which signal and which number is which threshold.
 */
import { type RuleOverrides, type RuleSettings, ruleSettings } from '../diagnosis/catalog.js';
import { formatNumberWithUnit } from '../diagnosis/format.js';
import { conditionWith, type RuleId, type Severity, type ThresholdSpec } from '../diagnosis/rule.js';
import { SIGNALS, type SignalDefinition } from '../diagnosis/signals.js';
import { type ComparisonOp, childrenOf, type Expr } from '../promql/expr.js';
import { formatNumber, renderPromQL } from '../promql/render.js';

const COMPARISON_OPS: readonly string[] = ['>', '<', '>=', '<=', '==', '!='];

/** A signal compared with a number: drawn as a threshold line on the signal's panel. */
export type ThresholdLine = {
  readonly rule: RuleId;
  readonly severity: Severity;
  readonly signal: string;
  readonly op: ComparisonOp;
  readonly value: number;
  /** The threshold's name in the rule definition, when the number is one. */
  readonly threshold?: string;
};

/** One conjunct of a condition (`a and b and c` has three), in words, with the signals it reads. */
export type Clause = {
  readonly text: string;
  readonly signals: ReadonlySet<string>;
};

export type RuleAnalysis = {
  readonly settings: RuleSettings;
  readonly condition: Expr;
  readonly lines: readonly ThresholdLine[];
  readonly clauses: readonly Clause[];
  /** The signal whose value the condition's output carries (the alert's `$value`), when there is one. */
  readonly valueSignal?: SignalDefinition;
};

// ---- signals in a condition ----

const SIGNAL_BY_ID: ReadonlyMap<string, SignalDefinition> = new Map(SIGNALS.map((s) => [s.id, s]));

/** The signal `expr` is a node of, if any. */
export function signalOf(expr: Expr): SignalDefinition | undefined {
  return expr.kind === 'signal' ? SIGNAL_BY_ID.get(expr.id) : undefined;
}

/** Every signal that occurs in `expr`. */
export function signalsIn(expr: Expr): Set<string> {
  const found = new Set<string>();
  const visit = (e: Expr): void => {
    if (e.kind === 'signal') found.add(e.id);
    else childrenOf(e).forEach(visit);
  };
  visit(expr);
  return found;
}

// ---- analysis ----

export function analyseRule(settings: RuleSettings): RuleAnalysis {
  const condition = conditionWith(settings.rule, settings.thresholds);
  const lines: ThresholdLine[] = [];

  const findLines = (e: Expr): void => {
    if (e.kind !== 'binary') return;
    const lhsSignal = signalOf(e.lhs);
    if (
      COMPARISON_OPS.includes(e.op) &&
      lhsSignal !== undefined &&
      (e.rhs.kind === 'number' || e.rhs.kind === 'threshold')
    ) {
      lines.push({
        rule: settings.rule.id,
        severity: settings.rule.severity,
        signal: lhsSignal.id,
        op: e.op as ComparisonOp,
        value: e.rhs.value,
        ...(e.rhs.kind === 'threshold' ? { threshold: e.rhs.name } : {}),
      });
      return;
    }
    findLines(e.lhs);
    findLines(e.rhs);
  };
  findLines(condition);

  const describe = (e: Expr): string => describeExpr(e, settings.rule.thresholds);
  const clauses = conjuncts(condition).map((e) => ({
    // A bare signal as a conjunct keeps the queues that have a value for it.
    text: signalOf(e) === undefined ? describe(e) : `${describe(e)} has a value`,
    signals: signalsIn(e),
  }));

  const valueSignal = valueSignalOf(condition);
  return {
    settings,
    condition,
    lines,
    clauses,
    ...(valueSignal === undefined ? {} : { valueSignal }),
  };
}

/** Splits top-level `and`s (whatever their matching) into conjuncts. */
function conjuncts(e: Expr): Expr[] {
  return e.kind === 'binary' && e.op === 'and' ? [...conjuncts(e.lhs), ...conjuncts(e.rhs)] : [e];
}

const OP_WORD: Readonly<Record<string, string>> = {
  '>=': '≥',
  '<=': '≤',
  '>': '>',
  '<': '<',
  '==': '=',
  '!=': '≠',
  '*': '×',
  '/': '/',
  '+': '+',
  '-': '−',
  and: 'and',
  or: 'or',
  unless: 'unless',
};

/**
 * An expression in words: signals by title, thresholds as `value (name)` in the threshold's unit, anything
 * else as PromQL in backquotes.
 */
export function describeExpr(e: Expr, specs: Readonly<Record<string, ThresholdSpec>>): string {
  const signalDef = signalOf(e);
  if (signalDef !== undefined) return signalDef.title;
  if (e.kind === 'number') return formatNumber(e.value);
  if (e.kind === 'threshold') {
    const spec = specs[e.name];
    return spec === undefined ? formatNumber(e.value) : `${formatThreshold(e.value, spec)} (${e.name})`;
  }
  // Without a signal in it there is nothing to put in words: the PromQL says it exactly.
  if (e.kind === 'clamp_min' && signalsIn(e).size > 0)
    return `max(${describeExpr(e.expr, specs)}, ${formatNumber(e.min)})`;
  if (e.kind === 'binary' && (signalsIn(e).size > 0 || namesThreshold(e))) {
    const side = (operand: Expr, isRight: boolean): string => {
      const text = describeExpr(operand, specs);
      return operand.kind === 'binary' && needsParentheses(e.op, operand.op, isRight) ? `(${text})` : text;
    };
    return `${side(e.lhs, false)} ${OP_WORD[e.op] ?? e.op} ${side(e.rhs, true)}`;
  }
  return `\`${renderPromQL(e)}\``;
}

/** Whether a threshold appears in the expression: its name is worth the words even where no signal is. */
function namesThreshold(expr: Expr): boolean {
  return expr.kind === 'threshold' || childrenOf(expr).some(namesThreshold);
}

/** PromQL's binary operator precedence, lowest first. */
function precedence(op: string): number {
  if (op === 'or') return 1;
  if (op === 'and' || op === 'unless') return 2;
  if (COMPARISON_OPS.includes(op)) return 3;
  if (op === '+' || op === '-') return 4;
  return 5;
}

/**
 * Whether a child operation needs parentheses in words: when precedence requires them, and around a set
 * operation inside a different one (`(a and b) or c`), which readers should not have to work out.
 */
function needsParentheses(parentOp: string, childOp: string, isRight: boolean): boolean {
  const parent = precedence(parentOp);
  const child = precedence(childOp);
  if (child < parent) return true;
  if (child === parent && isRight) return true;
  return child <= 2 && parent <= 2 && childOp !== parentOp;
}

/** A threshold value in its unit: `20 items`, `10s`, `88%`, `0.02/s`; plain for counts. */
export function formatThreshold(value: number, spec: ThresholdSpec): string {
  return spec.unit === 'count' ? formatNumber(value) : formatNumberWithUnit(value, spec.unit);
}

/**
 * The signal whose values the condition's output series carry: follow the left operand through comparisons
 * (without `bool`, a comparison keeps its left value), `and` and `unless`. Arithmetic or `or` on the way
 * means the output value is no single signal.
 */
function valueSignalOf(expr: Expr): SignalDefinition | undefined {
  const found = signalOf(expr);
  if (found !== undefined) return found;
  if (expr.kind !== 'binary') return undefined;
  if (COMPARISON_OPS.includes(expr.op) || expr.op === 'and' || expr.op === 'unless') return valueSignalOf(expr.lhs);
  return undefined;
}

/** For one signal: the rules whose conditions read it, with the clauses that do and the lines on it. */
export type SignalUse = {
  readonly analysis: RuleAnalysis;
  readonly clauses: readonly Clause[];
  readonly lines: readonly ThresholdLine[];
};

export function usesOfSignal(signalId: string, analyses: readonly RuleAnalysis[]): SignalUse[] {
  const uses: SignalUse[] = [];
  for (const analysis of analyses) {
    const clauses = analysis.clauses.filter((c) => c.signals.has(signalId));
    if (clauses.length === 0) continue;
    uses.push({ analysis, clauses, lines: analysis.lines.filter((l) => l.signal === signalId) });
  }
  return uses;
}

/** The analyses of the enabled rules, with the overrides applied. */
export function ruleAnalyses(overrides: RuleOverrides = {}): RuleAnalysis[] {
  return ruleSettings(overrides)
    .filter((s) => s.enabled)
    .map(analyseRule);
}
