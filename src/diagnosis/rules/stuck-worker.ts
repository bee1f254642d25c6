import { allOf } from '../../promql/expr.js';
import { compare } from '../conditions.js';
import { formatValue, numberOf } from '../format.js';
import { defineRule, SHARE } from '../rule.js';
import { MINUTE_MS } from '../signals.js';

/**
 * Stuck worker: a sync that never returns. Its age, the longest-running processor, grows one second per
 * second, and so does the unfinished work (about 1 s/s per stuck worker). A slow sync that finishes resets
 * the longest-running processor and is slow work, not this.
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
        "Age of the longest-running sync at or above which it may be stuck. No sync that returns runs this long: each API call a reconcile makes ends within the apiserver's 60 s request timeout, and an external call with a timeout returns within a minute or two; five minutes is past all of them, while a worker that never returns ages without end. The detection curve: one stuck of 1 to 16 workers, found on every seed 11 minutes after the sync began (its 5 minutes of age, then the `for`).",
    },
    minAgeGrowth: {
      default: 0.9,
      unit: 'ratio',
      range: SHARE,
      description:
        'Growth of the longest-running sync age (seconds per second) at or above which it never finished. A sync that never returns ages exactly one second per second; while syncs finish, the oldest one is replaced by a younger one and the reading falls back, so its growth over the window averages far below one. The margin under 1 absorbs samples stamped a little apart from when they were read.',
    },
    minUnfinishedGrowth: {
      default: 0.8,
      unit: 'workers',
      description:
        'Growth of the unfinished work (seconds per second) at or above which at least one worker is stuck. A stuck sync adds one second of unfinished work per second; the syncs that come and go on the other workers add their in-flight time, which rises and falls but does not trend, so one stuck worker reads about 1 and the margin under it absorbs their swings.',
    },
  },
  forMs: 5 * MINUTE_MS,
  condition: (t) =>
    allOf(
      compare('longestRunning', '>=', t.minAge),
      compare('longestRunningGrowth', '>=', t.minAgeGrowth),
      compare('unfinishedWorkGrowth', '>=', t.minUnfinishedGrowth),
    ),
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
