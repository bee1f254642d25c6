/**
 * Building blocks for rule conditions. A condition's output series must carry a queue's identity labels,
 * so signals of coarser scope (controller, process) are joined onto a queue-level left-hand side with
 * `ignoring(...) group_left`, never the other way round.
 */
import { LABEL } from '../metrics/names.js';
import { binary, type ComparisonOp, type Expr, num, type VectorMatching } from '../promql/expr.js';
import { type SignalId, type SignalScope, signal } from './signals.js';

export function sig(id: SignalId): Expr {
  return signal(id).expr;
}

/** The matching that joins a series of `scope` onto queue-level series. */
export function joinMatching(scope: SignalScope): VectorMatching | undefined {
  switch (scope) {
    case 'queue':
      return undefined;
    case 'controller':
      return { ignoring: [LABEL.name], groupLeft: true };
    case 'process':
      return { ignoring: [LABEL.name, LABEL.controller], groupLeft: true };
  }
}

/** `signal op threshold`: keeps the queues where it holds. */
export function compare(id: SignalId, op: ComparisonOp, threshold: number): Expr {
  return binary(op, sig(id), num(threshold));
}

/**
 * `queueLevel op (other * factor)`, where `other` is a signal of any scope joined onto the queue-level
 * left side. E.g. `relate(scale('addRate', 0.8), '<=', 'writeRate')`.
 */
export function relate(queueLevel: Expr, op: ComparisonOp, other: SignalId, factor = 1): Expr {
  const rhs = factor === 1 ? sig(other) : binary('*', sig(other), num(factor));
  return binary(op, queueLevel, rhs, joinMatching(signal(other).scope));
}

/** `signal * factor`. */
export function scale(id: SignalId, factor: number): Expr {
  return binary('*', sig(id), num(factor));
}

/** Keeps the queue-level series of `queueLevel` whose controller or process satisfies `otherCondition`. */
export function where(queueLevel: Expr, otherCondition: Expr, otherScope: SignalScope): Expr {
  const matching = joinMatching(otherScope);
  return binary(
    'and',
    queueLevel,
    otherCondition,
    matching === undefined ? undefined : { ignoring: matching.ignoring ?? [] },
  );
}
