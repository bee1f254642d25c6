import { describeSlope } from './direction.js';
import { formatNumber, numberOf } from './format.js';
import type { SignalSnapshot } from './rule.js';

/**
 * A sentence for a priority queue whose low-priority keys (the initial list, resyncs) wait and are not worked
 * off: the list falls by less than `drainShare` of the completions (only as real changes lift its keys to priority
 * 0, if at all), since the workers serve priority 0 first and whatever holds them starves the list. Empty where no
 * key waits at low priority (a classic queue has no such depth) or the list is worked off.
 */
export function lowPriorityStarvation(signals: SignalSnapshot, drainShare: number): string {
  const waiting = numberOf(signals.lowPriorityDepth);
  const slope = numberOf(signals.lowPriorityDepthSlope);
  const completions = numberOf(signals.completionRate);
  if (waiting === undefined || waiting < 1 || slope === undefined || completions === undefined) return '';
  if (slope <= -drainShare * completions) return '';
  return `Meanwhile ${formatNumber(signals.lowPriorityDepth)} keys wait at low priority (initial list, resyncs), and their depth at low priority is ${describeSlope(signals.lowPriorityDepthSlope)}, not worked off: the workers serve priority 0 first, so what holds them starves the list.`;
}
