/**
 * What identifies a queue, a controller and a process in a set of labels.
 *
 * A queue is its target (the scraped process: `job`/`instance` in Prometheus, plus any other target labels
 * such as `namespace` and `pod`) plus `name` and, in controller-runtime, `controller`. Work-queue series carry
 * all of them; controller-runtime series carry the target labels and `controller`; process-wide series
 * (REST client, leader election) carry only the target labels. Joins therefore ignore the labels the coarser
 * side lacks, whatever target labels a deployment adds.
 */
import { LABEL } from '../metrics/names.js';
import { targetName } from '../metrics/target.js';
import { type Labels, signatureWithout, withoutLabels } from '../promql/vector.js';

/** Labels that are not part of a queue's identity on work-queue series. */
export const NON_IDENTITY_LABELS: readonly string[] = [LABEL.metricName, LABEL.le, LABEL.priority, LABEL.quantile];
/** Labels a queue has that its controller-level series lack. */
export const QUEUE_ONLY_LABELS: readonly string[] = [LABEL.name];
/** Labels a queue has that process-level series lack. */
export const CONTROLLER_AND_QUEUE_LABELS: readonly string[] = [LABEL.name, LABEL.controller];

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

/** The key of the process a series belongs to (its target labels only). */
export function processKey(seriesLabels: Labels): string {
  return signatureWithout(seriesLabels, [...NON_IDENTITY_LABELS, ...CONTROLLER_AND_QUEUE_LABELS, ...PER_SERIES_LABELS]);
}

/** Labels that distinguish series within one process but never name a target. */
const PER_SERIES_LABELS: readonly string[] = [LABEL.result, LABEL.code, LABEL.method, LABEL.host];

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
