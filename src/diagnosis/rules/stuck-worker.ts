import { compare } from '../conditions.js';
import { formatValue, numberOf } from '../format.js';
import { defineRule } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Stuck worker: a sync that never returns. Its age, the longest-running processor, grows one second per
 * second without end; a sync that returns resets it. The age alone decides: the longest-running processor is
 * the age of the oldest sync in flight, read exactly at every scrape, so it passes five minutes only if some
 * sync has run five minutes, and it cannot flicker (it only falls when that sync returns). Its growth and the
 * growth of the unfinished work are evidence (how many workers are lost), not conditions: a sync five minutes
 * old has aged one second per second all along, so they would only repeat the age.
 */
export const stuckWorker = defineRule({
  id: 'WorkqueueStuckWorker',
  title: 'Work queue stuck worker',
  severity: 'critical',
  scope: 'queue',
  thresholds: {
    minAge: {
      default: 300,
      unit: 's',
      description:
        "Age of the longest-running sync at or above which it is stuck. No sync that returns runs this long: each API call a reconcile makes ends within the apiserver's 60 s request timeout, and an external call with a timeout returns within a minute or two; five minutes is past all of them, while a worker that never returns ages without end. Half of it calls a sync bounded by a four-minute timeout stuck (the boundary grid); twice it pages five minutes late on every stuck worker. The detection curves: one stuck of 1 to 16 workers is found on every seed 7 minutes after the sync began (its five minutes of age, the one-minute `for`, the step); long syncs that return are never called stuck up to 4 minutes (±20%), and are once they pass 6.",
    },
  },
  // The age is its own persistence (it grows until the sync returns and never flickers): the `for` only spans a
  // few evaluations, so a page comes a minute after the sync passed the age, not five.
  forMs: 1 * MINUTE_MS,
  condition: (t) => compare('longestRunning', '>=', t.minAge),
  evidence: [
    'longestRunning',
    'longestRunningGrowth',
    'unfinishedWork',
    'unfinishedWorkGrowth',
    'maxWorkers',
    'completionRate',
  ],
  derivedTitles: { stuckWorkers: 'Stuck workers' },
  derive(signals) {
    const growth = numberOf(signals.unfinishedWorkGrowth);
    return {
      stuckWorkers:
        growth === undefined
          ? { value: null, unit: 'workers', missing: 'insufficient_data' }
          : { value: Math.max(1, Math.round(growth)), unit: 'workers' },
    };
  },
  text: {
    summary: ({ signals }) =>
      `A sync has been running for ${formatValue(signals.longestRunning)} and unfinished work grows ${formatValue(signals.unfinishedWorkGrowth)} per second: about ${formatValue(signals.stuckWorkers)} stuck.`,
    meaning:
      'A reconcile never returns. The worker running it is lost until the process restarts, and its key is never reconciled again; with few workers the whole controller stalls.',
    cause: () =>
      'A deadlock, a channel or lock never released, or an external call without a timeout (HTTP client, exec, cloud SDK) waiting forever.',
    fix: () =>
      'Take a goroutine dump (SIGQUIT or /debug/pprof/goroutine?debug=2) to find the blocked call; give every call a context with a deadline; restart the pod to recover the worker meanwhile.',
    confirm: [
      {
        text: 'The oldest running sync ages one second per second:',
        signals: ['longestRunning', 'longestRunningGrowth'],
      },
      {
        text: 'Unfinished work grows about 1 s/s per stuck worker:',
        signals: ['unfinishedWork', 'unfinishedWorkGrowth'],
      },
    ],
  },
});
