import { anyOf } from '../../promql/expr.js';
import { compare } from '../conditions.js';
import { formatValue } from '../format.js';
import { defineRule } from '../rule.js';
import { MINUTE_MS, SLOW_SYNC_SECONDS } from '../signals.js';

/**
 * Slow work: some syncs take long, the signature of a blocking call (an external API, a lock, a sleep)
 * inside reconcile. Read from the longest-running processor (sharp: seconds, sampled live) and from the
 * rate of syncs above the 10 s bucket, so a small share of blocking syncs is caught even when the
 * interpolated p99 stays low; a steady 2 s sync (p99 reads about 9.9 s) is not slow work.
 *
 * One line for a slow sync, running or finished: `SLOW_SYNC_SECONDS`, the histogram's 10 s bucket. A sync of
 * cached reads and an API write takes tens of milliseconds; ten seconds is hundreds of times that, a decade above
 * client-go's 1 s bucket and a sixth of the apiserver's own request timeout: only a call waiting on something
 * outside takes it. The bucket is fixed by the metrics (client-go's decades end at it), so the running sync's age
 * is held to the same line rather than a tunable of its own: a different line there would call a sync slow while
 * it runs and not once it finished, or the reverse. The longest-running reading adds what the histogram cannot
 * see: a sync still running (one of minutes shows only once it returns), seen within a scrape. The detection curve
 * (0.8% of 2 syncs a second, from the process's start): blocking syncs of 6.4 to 9.6 s are never found, of 8 to
 * 12 s and longer on every seed, within 10 minutes (7 from 16 s on).
 *
 * Their share of the syncs is shown, not tested: a healthy controller has none above 10 s, so any share looks
 * alarming, and at under two syncs a second a share of one in a thousand is a single sync in a quarter hour (an
 * occasional stall, a long GC), where the rate asks for two, still coming.
 */
export const slowWork = defineRule({
  id: 'WorkqueueSlowWork',
  title: 'Work queue slow syncs',
  severity: 'warning',
  scope: 'queue',
  thresholds: {
    minSlowRate: {
      default: 0.002,
      unit: '1/s',
      description:
        'Syncs longer than 10 s per second (over 15 minutes) at or above which syncs block: two in a quarter of an hour, still coming. Whatever the throughput: one blocking sync a minute among 20 syncs a second is 0.06% of them, while the longest-running reading sees a sync of 12 to 18 s only when a scrape falls in its last seconds, so it flickers. A healthy controller finishes none above 10 s; an occasional stall (a slow apiserver, a long GC) is one, not a steady two every quarter hour. The detection curve (blocking syncs of 24 to 36 s among 2 syncs a second): found on every seed from 0.1% of the syncs (0.002 a second), on some below it, where a quarter hour holds two of them by chance.',
    },
  },
  forMs: 5 * MINUTE_MS,
  condition: (t) =>
    anyOf(compare('longestRunningMax', '>=', SLOW_SYNC_SECONDS), compare('slowSyncRate', '>=', t.minSlowRate)),
  evidence: [
    'longestRunningMax',
    'slowSyncShare',
    'slowSyncRate',
    'workDurationMean',
    'workDurationP99',
    'unfinishedWork',
    'busyWorkers',
    'maxWorkers',
  ],
  text: {
    summary: ({ signals }) =>
      `Syncs block: the longest-running sync reached ${formatValue(signals.longestRunningMax)} and ${formatValue(signals.slowSyncShare)} of syncs (${formatValue(signals.slowSyncRate)}) took over 10 s (mean ${formatValue(signals.workDurationMean)}).`,
    meaning:
      'Some reconciles take many seconds. Each one holds a worker, so a few of them cut throughput and delay every other key behind them.',
    cause: () =>
      'A blocking call inside reconcile: an external API or cloud provider call, a slow webhook, a lock, a sleep, or a client without a timeout.',
    fix: () =>
      'Bound every external call with a context timeout; move long work out of reconcile (start it asynchronously and check back with RequeueAfter); raise MaxConcurrentReconciles only as a stopgap.',
    confirm: [
      {
        text: 'The longest-running sync and the share and rate of syncs over 10 s:',
        signals: ['longestRunningMax', 'slowSyncShare', 'slowSyncRate'],
      },
      { text: 'The work-duration tail (coarse: decade buckets):', signals: ['workDurationP99', 'workDurationMean'] },
    ],
  },
});
