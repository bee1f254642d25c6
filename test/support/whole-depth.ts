/**
 * Each queue's whole depth, 0 where it counts adds but has no depth series: what the depth slopes' subqueries
 * read. Written out here, not imported from the signals, so that a change there has to agree with the tests.
 */
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { binary, type Expr, num, selector, sumWithout } from '../../src/promql/expr.js';

export const WHOLE_DEPTH: Expr = binary(
  'or',
  sumWithout([LABEL.priority], selector(WORKQUEUE.depth)),
  binary('*', num(0), sumWithout([LABEL.priority], selector(WORKQUEUE.adds))),
);
