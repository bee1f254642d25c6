/**
 * Reads a rule's condition tree for the generators: which signals it compares with which thresholds (the
 * dashboards' threshold lines), its clauses in words (panel descriptions, runbooks, alert descriptions), and
 * which signal the alert's `$value` carries.
 *
 * Values always come from the condition built with the thresholds in force. Threshold names are found by
 * building the condition a second time with a distinct sentinel per threshold and walking both trees side by
 * side: a number in the real tree whose twin is a sentinel is that threshold.
 */
import type { RuleSettings } from '../diagnosis/catalog.js';
import { formatNumberWithUnit } from '../diagnosis/format.js';
import type { DiagnosisRule, RuleId, Severity, ThresholdSpec } from '../diagnosis/rule.js';
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

// ---- structural identity of expressions ----

/** A canonical text of any JSON-like value: object keys sorted, so equal trees give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const SIGNAL_BY_SHAPE: ReadonlyMap<string, SignalDefinition> = new Map(SIGNALS.map((s) => [canonical(s.expr), s]));

/** The signal whose expression is exactly `expr`, if any. */
export function signalOf(expr: Expr): SignalDefinition | undefined {
  return SIGNAL_BY_SHAPE.get(canonical(expr));
}

/** Every signal whose expression occurs as a subtree of `expr`. */
export function signalsIn(expr: Expr): Set<string> {
  const found = new Set<string>();
  const visit = (e: Expr): void => {
    const s = signalOf(e);
    if (s !== undefined) found.add(s.id);
    else childrenOf(e).forEach(visit);
  };
  visit(expr);
  return found;
}

// ---- threshold names via sentinels ----

/** Distinct values no definition uses, one per threshold name. */
function sentinels(rule: DiagnosisRule): Map<string, number> {
  const names = Object.keys(rule.thresholds);
  return new Map(names.map((name, index) => [name, 987_654_321.125 + index * 1_000.5]));
}

/** The condition built with sentinel thresholds, and a map from sentinel value to threshold name. */
function sentinelTwin(settings: RuleSettings): { twin: Expr; nameOf: Map<number, string> } {
  const values = sentinels(settings.rule);
  const nameOf = new Map([...values].map(([name, value]) => [value, name]));
  return { twin: settings.rule.condition(Object.fromEntries(values)), nameOf };
}

/** The twin of `real`'s child where both trees have the same shape at this node. */
function sameShape(real: Expr, twin: Expr | undefined): Expr | undefined {
  if (twin === undefined || twin.kind !== real.kind) return undefined;
  if (real.kind === 'binary' && twin.kind === 'binary' && real.op !== twin.op) return undefined;
  return twin;
}

// ---- analysis ----

export function analyseRule(settings: RuleSettings): RuleAnalysis {
  const condition = settings.rule.condition(settings.thresholds);
  const { twin, nameOf } = sentinelTwin(settings);
  const lines: ThresholdLine[] = [];

  const findLines = (real: Expr, shadow: Expr | undefined): void => {
    if (real.kind !== 'binary') return;
    const twinNode = sameShape(real, shadow);
    const twinBinary = twinNode?.kind === 'binary' ? twinNode : undefined;
    const lhsSignal = signalOf(real.lhs);
    if (COMPARISON_OPS.includes(real.op) && lhsSignal !== undefined && real.rhs.kind === 'number') {
      const twinRhs = twinBinary?.rhs;
      const threshold = twinRhs?.kind === 'number' ? nameOf.get(twinRhs.value) : undefined;
      lines.push({
        rule: settings.rule.id,
        severity: settings.rule.severity,
        signal: lhsSignal.id,
        op: real.op as ComparisonOp,
        value: real.rhs.value,
        ...(threshold === undefined ? {} : { threshold }),
      });
      return;
    }
    findLines(real.lhs, twinBinary?.lhs);
    findLines(real.rhs, twinBinary?.rhs);
  };
  findLines(condition, twin);

  const describe = (real: Expr, shadow: Expr | undefined): string =>
    describeExpr(real, sameShape(real, shadow), nameOf, settings.rule.thresholds, settings.thresholds);
  const clauses = conjuncts(condition, twin).map(([real, shadow]) => ({
    // A bare signal as a conjunct keeps the queues that have a value for it.
    text: signalOf(real) === undefined ? describe(real, shadow) : `${describe(real, shadow)} has a value`,
    signals: signalsIn(real),
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

/** Splits top-level `and`s (whatever their matching) into conjuncts, each with its sentinel twin. */
function conjuncts(real: Expr, twin: Expr | undefined): Array<[Expr, Expr | undefined]> {
  const shadow = sameShape(real, twin);
  if (real.kind === 'binary' && real.op === 'and') {
    const t = shadow?.kind === 'binary' ? shadow : undefined;
    return [...conjuncts(real.lhs, t?.lhs), ...conjuncts(real.rhs, t?.rhs)];
  }
  return [[real, shadow]];
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
function describeExpr(
  real: Expr,
  twin: Expr | undefined,
  nameOf: ReadonlyMap<number, string>,
  specs: Readonly<Record<string, ThresholdSpec>>,
  values: Readonly<Record<string, number>>,
): string {
  const signalDef = signalOf(real);
  if (signalDef !== undefined) return signalDef.title;
  // Without a signal in it there is nothing to put in words: the PromQL says it exactly.
  if (real.kind !== 'number' && signalsIn(real).size === 0) return `\`${renderPromQL(real)}\``;
  if (real.kind === 'number') {
    const name = twin?.kind === 'number' ? nameOf.get(twin.value) : undefined;
    const spec = name === undefined ? undefined : specs[name];
    if (name === undefined || spec === undefined) return formatNumber(real.value);
    return `${formatThreshold(values[name] ?? real.value, spec)} (${name})`;
  }
  if (real.kind === 'binary') {
    const t = twin?.kind === 'binary' && twin.op === real.op ? twin : undefined;
    const side = (e: Expr, s: Expr | undefined, isRight: boolean): string => {
      const text = describeExpr(e, sameShape(e, s), nameOf, specs, values);
      return e.kind === 'binary' && signalOf(e) === undefined && needsParentheses(real.op, e.op, isRight)
        ? `(${text})`
        : text;
    };
    return `${side(real.lhs, t?.lhs, false)} ${OP_WORD[real.op] ?? real.op} ${side(real.rhs, t?.rhs, true)}`;
  }
  return `\`${renderPromQL(real)}\``;
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

/** The analyses of the enabled rules, in catalog order. */
export function analyseRules(settings: readonly RuleSettings[]): RuleAnalysis[] {
  return settings.filter((s) => s.enabled).map(analyseRule);
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
