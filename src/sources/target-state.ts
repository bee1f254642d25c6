/**
 * A target (a scraped process, a recording, a Prometheus server's targets) as sources report it and the
 * diagnosis names it: sources define it, the diagnosis layer downstream reads it.
 */
import type { Labels } from '../exposition/labels.js';
import { LABEL } from '../metrics/names.js';

export type TargetState = {
  /** `job/instance`, as `targetName` derives it from the labels. */
  readonly name: string;
  readonly labels: Labels;
  /** Set when the target could not be read at all. */
  readonly error?: { readonly code: string; readonly message: string };
};

/** A target's name from its labels: `job/instance`, or whichever of them exists, else `unknown`. */
export function targetName(labels: Labels): string {
  const job = labels[LABEL.job];
  const instance = labels[LABEL.instance];
  if (job !== undefined && instance !== undefined) return `${job}/${instance}`;
  return instance ?? job ?? 'unknown';
}
