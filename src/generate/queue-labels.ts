/**
 * The identity labels generated queries narrow by: a queue is its target (`job`, `instance`) plus `name`
 * and, in controller-runtime, `controller`. Controller-level series lack `name` and process-level series lack
 * `controller` too, so each scope narrows by the labels its series carry.
 */
import type { RuleScope } from '../diagnosis/rule.js';
import type { SignalScope } from '../diagnosis/signals.js';
import { LABEL } from '../metrics/names.js';

/** The labels that identify a queue, in the order of the dashboard variables. */
export const QUEUE_LABELS: readonly string[] = [LABEL.job, LABEL.instance, LABEL.controller, LABEL.name];
/** The labels that identify a scraped target. */
export const TARGET_LABELS: readonly string[] = [LABEL.job, LABEL.instance];

/** The identity labels a series of each signal scope carries. */
export function scopeLabels(scope: SignalScope): readonly string[] {
  switch (scope) {
    case 'queue':
      return QUEUE_LABELS;
    case 'controller':
      return [LABEL.job, LABEL.instance, LABEL.controller];
    case 'process':
      return TARGET_LABELS;
  }
}

/** The identity labels an alert of each rule scope carries (its condition's output labels). */
export function ruleScopeLabels(scope: RuleScope): readonly string[] {
  return scope === 'queue' ? QUEUE_LABELS : TARGET_LABELS;
}
