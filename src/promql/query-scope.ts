/**
 * Where queries look in a fleet: the fleet selector (label matchers added to every raw selector a query reads)
 * and the target labels that name a target's cluster and namespace. Set by the configuration's `selector`,
 * `clusterLabel` and `namespaceLabel`; read by the generators (recording rules, alerts, dashboards) and by
 * Prometheus mode (every query the diagnoses send). None of them by default.
 */
import type { LabelMatcher } from './expr.js';

export type QueryScope = {
  /** Matchers added to every raw selector, e.g. `job=~"my-operator.*"`. */
  readonly selector?: readonly LabelMatcher[];
  /** The target label that names a target's cluster, e.g. `cluster`. */
  readonly clusterLabel?: string;
  /** The target label that names a target's namespace, e.g. `namespace`. */
  readonly namespaceLabel?: string;
};
