/**
 * Building blocks for rule conditions. A condition's output series must carry a queue's identity labels,
 * so signals of coarser scope (controller, process) are joined onto a queue-level left-hand side with
 * `ignoring(...) group_left`, never the other way round.
 */
import { binary, type ComparisonOp, type Expr, num, signalRef } from '../promql/expr.js';
import { filterMatching, joinMatching } from './identity.js';
import { type SignalId, type SignalScope, signal } from './signals.js';

export function sig(id: SignalId): Expr {
  return signalRef(id, signal(id).expr);
}

/** A threshold node as it is, a plain number as a number node. */
export function operand(value: Expr | number): Expr {
  return typeof value === 'number' ? num(value) : value;
}

/** The number a threshold (node or plain number) stands for. */
export function numericValue(value: Expr | number): number {
  if (typeof value === 'number') return value;
  if (value.kind === 'number' || value.kind === 'threshold') return value.value;
  throw new TypeError(`not a number: ${value.kind}`);
}

/** `-value`, as a plain number: a negated threshold is no longer the threshold itself. */
export function negated(value: Expr | number): number {
  return -numericValue(value);
}

/** `signal op threshold`: keeps the queues where it holds. */
export function compare(id: SignalId, op: ComparisonOp, threshold: Expr | number): Expr {
  return binary(op, sig(id), operand(threshold));
}

/**
 * `queueLevel op (other * factor)`, where `other` is a signal of any scope joined onto the queue-level
 * left side. E.g. `relate(scale('addRate', 0.8), '<=', 'writeRate')`.
 */
export function relate(queueLevel: Expr, op: ComparisonOp, other: SignalId, factor: Expr | number = 1): Expr {
  const rhs = numericValue(factor) === 1 ? sig(other) : binary('*', sig(other), operand(factor));
  return binary(op, queueLevel, rhs, joinMatching(signal(other).scope));
}

/** `signal * factor`. */
export function scale(id: SignalId, factor: Expr | number): Expr {
  return binary('*', sig(id), operand(factor));
}

/** Keeps the queue-level series of `queueLevel` whose controller or process satisfies `otherCondition`. */
export function where(queueLevel: Expr, otherCondition: Expr, otherScope: SignalScope): Expr {
  return binary('and', queueLevel, otherCondition, filterMatching(otherScope));
}

/** Keeps the queue-level series of `queueLevel` whose controller or process has no series in `other`. */
export function unlessAny(queueLevel: Expr, other: Expr, otherScope: SignalScope): Expr {
  return binary('unless', queueLevel, other, filterMatching(otherScope));
}
