/**
 * What identifies a queue, a controller and a process in a set of labels, and so how series of one scope
 * join series of another. The one place the identity labels are listed: the engine's keys, the rule
 * conditions' joins and the generators' `by (...)` lists and alert labels all derive from the table below,
 * so they cannot disagree.
 *
 * A queue is its target (the scraped process: `job`/`instance` in Prometheus, plus any other target labels
 * such as `namespace` and `pod`) plus `name` and, in controller-runtime, `controller`. Work-queue series carry
 * all of them; controller-runtime series carry the target labels and `controller`; process-wide series
 * (REST client, leader election) carry only the target labels. Joins and keys therefore *drop* the labels
 * a coarser scope lacks, whatever target labels a deployment adds; generated queries, which must name their
 * grouping labels, *keep* the target labels Prometheus always attaches (`job`, `instance`) plus the scope's own.
 */
import { LABEL } from '../metrics/names.js';
import { signatureWithoutOf } from '../promql/derived-labels.js';
import type { Expr, VectorMatching } from '../promql/expr.js';
import { type Labels, withoutLabels } from '../promql/vector.js';
import { targetName } from '../sources/target-state.js';

/** Which series a quantity belongs to: one queue, one controller (all its queues), or one process. */
export type IdentityScope = 'queue' | 'controller' | 'process';

/** The target labels Prometheus attaches to every scraped series. */
export const TARGET_LABELS: readonly string[] = [LABEL.job, LABEL.instance];

/** The labels each scope adds to its target's, coarsest first. */
const SCOPE_OWN_LABELS: Readonly<Record<IdentityScope, readonly string[]>> = {
  process: [],
  controller: [LABEL.controller],
  queue: [LABEL.controller, LABEL.name],
};

/** Labels that are not part of any identity on work-queue series. */
const NON_IDENTITY_LABELS: readonly string[] = [LABEL.metricName, LABEL.le, LABEL.priority, LABEL.quantile];
/** Labels that distinguish series within one scope but never name a target, controller or queue. */
const PER_SERIES_LABELS: readonly string[] = [LABEL.result, LABEL.code, LABEL.method, LABEL.host];

/** The identity labels series of `scope` carry that series of the coarser scope `coarser` lack. */
export function labelsBeyond(scope: IdentityScope, coarser: IdentityScope): readonly string[] {
  const coarserOwn = SCOPE_OWN_LABELS[coarser];
  return SCOPE_OWN_LABELS[scope].filter((label) => !coarserOwn.includes(label));
}

/**
 * What generated queries know of a deployment's target labels beyond `job` and `instance`: the labels that
 * say where a target runs (e.g. `cluster` and `namespace` in a fleet), coarsest first. Joins and keys need
 * none of this (they drop what a coarser scope lacks); queries that name their grouping labels do.
 */
export type IdentityOptions = {
  /** Target labels naming where a target runs, coarsest first, e.g. `['cluster', 'namespace']`. */
  readonly placementLabels?: readonly string[];
};

/** The target labels generated queries keep: the placement labels, then `job` and `instance`. */
export function targetLabels(options: IdentityOptions = {}): readonly string[] {
  return [...(options.placementLabels ?? []), ...TARGET_LABELS];
}

/** The labels generated queries group series of `scope` by, in the order of the dashboard variables. */
export function identityLabels(scope: IdentityScope, options: IdentityOptions = {}): readonly string[] {
  return [...targetLabels(options), ...SCOPE_OWN_LABELS[scope]];
}

/** The labels that identify a queue, in the order of the dashboard variables. */
export const QUEUE_LABELS: readonly string[] = identityLabels('queue');

/**
 * `expr` with the placement labels in front of every `by (...)` and `on (...)` list that starts with the
 * target labels, so a definition written for `job`/`instance` keeps targets of different clusters and
 * namespaces apart. Without placement labels, `expr` itself.
 */
export function withPlacementLabels(expr: Expr, options: IdentityOptions = {}): Expr {
  const placement = options.placementLabels ?? [];
  if (placement.length === 0) return expr;
  const widen = (labels: readonly string[]): readonly string[] =>
    TARGET_LABELS.every((label, index) => labels[index] === label) ? [...placement, ...labels] : labels;
  const visit = (e: Expr): Expr => {
    switch (e.kind) {
      case 'aggregate':
        return { ...e, labels: e.mode === 'by' ? widen(e.labels) : e.labels, expr: visit(e.expr) };
      case 'histogram_quantile':
      case 'clamp_min':
      case 'signal':
      case 'subquery':
        return { ...e, expr: visit(e.expr) };
      case 'binary': {
        const on = e.matching?.on;
        const matching = on === undefined || e.matching === undefined ? e.matching : { ...e.matching, on: widen(on) };
        return matching === undefined
          ? { ...e, lhs: visit(e.lhs), rhs: visit(e.rhs) }
          : { ...e, lhs: visit(e.lhs), rhs: visit(e.rhs), matching };
      }
      case 'selector':
      case 'range':
      case 'number':
      case 'threshold':
        return e;
    }
  };
  return visit(expr);
}

/**
 * The matching that joins series of scope `coarser` onto series of the finer scope `onto` (`ignoring` the
 * labels only the finer side has, `group_left`); none when the scopes are the same.
 */
export function joinMatching(coarser: IdentityScope, onto: IdentityScope = 'queue'): VectorMatching | undefined {
  const ignoring = labelsBeyond(onto, coarser);
  return ignoring.length === 0 ? undefined : { ignoring, groupLeft: true };
}

/** The matching of a filter (`and`, `unless`) of series of scope `onto` by series of scope `coarser`. */
export function filterMatching(coarser: IdentityScope, onto: IdentityScope = 'queue'): VectorMatching | undefined {
  const ignoring = labelsBeyond(onto, coarser);
  return ignoring.length === 0 ? undefined : { ignoring };
}

/**
 * The key of the `scope`-level entity a series (or a queue's identity labels) belongs to: its labels
 * without the non-identity, per-series and finer-scope labels. A queue and a series of any scope meet on
 * `scopeKey(queueLabels, scope) === scopeKey(seriesLabels, scope)`. Process-wide series such as leader
 * election carry a `name` (the lease) that is not a queue name; the process key drops it too.
 */
export function scopeKey(labels: Labels, scope: IdentityScope): string {
  return signatureWithoutOf(labels, SCOPE_KEY_EXCLUDED[scope]);
}

const SCOPE_KEY_EXCLUDED: Readonly<Record<IdentityScope, readonly string[]>> = {
  queue: [...NON_IDENTITY_LABELS, ...PER_SERIES_LABELS, ...labelsBeyond('queue', 'queue')],
  controller: [...NON_IDENTITY_LABELS, ...PER_SERIES_LABELS, ...labelsBeyond('queue', 'controller')],
  process: [...NON_IDENTITY_LABELS, ...PER_SERIES_LABELS, ...labelsBeyond('queue', 'process')],
};

export type QueueIdentity = {
  /** Stable, URL-safe id. */
  readonly id: string;
  /** `job/instance` (or whichever of them exists). */
  readonly target: string;
  readonly name: string | null;
  readonly controller: string | null;
  /** The identity labels, as they appear on the queue's series. */
  readonly labels: Labels;
};

export function queueLabels(seriesLabels: Labels): Labels {
  return withoutLabels(seriesLabels, NON_IDENTITY_LABELS);
}

export function queueKey(seriesLabels: Labels): string {
  return signatureWithoutOf(seriesLabels, NON_IDENTITY_LABELS);
}

export function identityOf(seriesLabels: Labels): QueueIdentity {
  const labels = queueLabels(seriesLabels);
  const target = targetName(labels);
  const name = labels[LABEL.name] ?? null;
  const controller = labels[LABEL.controller] ?? null;
  return { id: queueId(target, name, controller), target, name, controller, labels };
}

/** The longest readable part of a queue id: ids stay short enough for a URL path whatever the labels hold. */
const MAX_ID_PART = 100;

/**
 * A readable, URL-safe id: `<target>.<name>[.<controller>]` with unsafe characters replaced and each part cut
 * at `MAX_ID_PART` characters, plus a short hash of the exact identity so two queues that differ only in
 * replaced or cut characters never collide.
 */
export function queueId(target: string, name: string | null, controller: string | null): string {
  const parts = [target, name ?? '-'];
  if (controller !== null && controller !== name) parts.push(controller);
  const readable = parts.map((p) => p.replace(/[^A-Za-z0-9_-]+/g, '_').slice(0, MAX_ID_PART)).join('.');
  return `${readable}~${fnv1a(JSON.stringify([target, name, controller]))}`;
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
