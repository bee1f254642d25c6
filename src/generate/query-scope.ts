/**
 * Where the generated queries look, from the configuration (`QueryScope`, promql/query-scope.ts): the fleet selector (label matchers added to
 * every raw selector of the recording rules, alerts and dashboards) and the target labels that name a
 * target's cluster and namespace (kept in the recorded series and the alerts' labels, grouped by in the
 * Alertmanager example, offered as dashboard variables). None of them by default.
 */
import { type IdentityOptions, type IdentityScope, identityLabels } from '../diagnosis/identity.js';
import type { QueryScope } from '../promql/query-scope.js';

export type { QueryScope };

/** The placement labels of the scope, coarsest first, for `identity.ts`. */
export function identityOptions(scope: QueryScope = {}): IdentityOptions {
  const placementLabels = [scope.clusterLabel, scope.namespaceLabel].filter((l): l is string => l !== undefined);
  return placementLabels.length === 0 ? {} : { placementLabels };
}

/** The labels that identify series of `scope` in this query scope: placement, target, then the scope's own. */
export function scopedIdentityLabels(identity: IdentityScope, scope: QueryScope = {}): readonly string[] {
  return identityLabels(identity, identityOptions(scope));
}

/** What a placement label is, for dashboard variables: its title and description. */
export function placementLabelInfo(
  label: string,
  scope: QueryScope,
): { readonly title: string; readonly description: string } | undefined {
  if (label === scope.clusterLabel) {
    return { title: 'Cluster', description: `The cluster of the targets (target label \`${label}\`).` };
  }
  if (label === scope.namespaceLabel) {
    return { title: 'Namespace', description: `The namespace of the targets (target label \`${label}\`).` };
  }
  return undefined;
}
