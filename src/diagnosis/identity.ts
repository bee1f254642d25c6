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
import type { VectorMatching } from '../promql/expr.js';
import { type Labels, signatureWithout, withoutLabels } from '../promql/vector.js';
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

/** The labels generated queries group series of `scope` by, in the order of the dashboard variables. */
export function identityLabels(scope: IdentityScope): readonly string[] {
  return [...TARGET_LABELS, ...SCOPE_OWN_LABELS[scope]];
}

/** The labels that identify a queue, in the order of the dashboard variables. */
export const QUEUE_LABELS: readonly string[] = identityLabels('queue');

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
  return signatureWithout(labels, [...NON_IDENTITY_LABELS, ...PER_SERIES_LABELS, ...labelsBeyond('queue', scope)]);
}

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
  return signatureWithout(seriesLabels, NON_IDENTITY_LABELS);
}

export function identityOf(seriesLabels: Labels): QueueIdentity {
  const labels = queueLabels(seriesLabels);
  const target = targetName(labels);
  const name = labels[LABEL.name] ?? null;
  const controller = labels[LABEL.controller] ?? null;
  return { id: queueId(target, name, controller), target, name, controller, labels };
}

/**
 * A readable, URL-safe id: `<target>.<name>[.<controller>]` with unsafe characters replaced, plus a short
 * hash of the exact identity so two targets that differ only in replaced characters never collide.
 */
export function queueId(target: string, name: string | null, controller: string | null): string {
  const parts = [target, name ?? '-'];
  if (controller !== null && controller !== name) parts.push(controller);
  const readable = parts.map((p) => p.replace(/[^A-Za-z0-9_-]+/g, '_')).join('.');
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
