/**
 * How soon the product promises each diagnosis once its problem exists: the deadlines the calibration judges the
 * rules by, stated here and never read from the rules they judge (a rule whose `for` or windows grew would move a
 * deadline read from it along with its findings, and no calibration could see it come late).
 *
 * A finding is owed from the later of `afterCauseMs` past the truth's cause (the planted cause: the onset where the
 * truth names none), the time a problem that starts at zero needs to show in full and to hold, and `afterOnsetMs`
 * past its onset where the cause came before it (a sync that never returns is in full view once it is old enough to
 * be called stuck; a list worked off on top of an overload hides the backlog until it ends): it needs only to hold
 * then. Then `ONSET_GRACE_MS`. Each budget says why a careful on-call engineer would wait that long and no longer.
 */
import type { RuleId } from '../diagnosis/rule.js';
import { MINUTE_MS } from '../diagnosis/signals.js';

/**
 * Slack after a diagnosis's budget: one evaluation step and a couple of scrapes, for the instant parts of what it
 * reads (the depth rising past a line, a first scrape of a new series).
 */
const ONSET_GRACE_MS = 60_000;

export type DetectionBudget = {
  /** How long past the onset the finding may take, where the cause came before the onset. */
  readonly afterOnsetMs: number;
  /** How long past the cause (the onset where the truth names none) the finding may take. */
  readonly afterCauseMs: number;
  /** Why, in the queue's terms. */
  readonly why: string;
};

export const DETECTION_BUDGETS: Readonly<Record<RuleId, DetectionBudget>> = {
  WorkqueueStuckWorker: {
    afterOnsetMs: MINUTE_MS,
    afterCauseMs: MINUTE_MS,
    why: 'The onset is the sync being old enough to be stuck: a minute confirms it is not a scrape between two syncs.',
  },
  WorkqueueBacklog: {
    afterOnsetMs: 10 * MINUTE_MS,
    afterCauseMs: 15 * MINUTE_MS,
    why: 'A healthy queue absorbs bursts that keep it busy for minutes (a rollout, a resync), so a backlog must outlast them: ten minutes of a depth that no longer drains. From its cause, five more for a growth that starts at zero to stand above the depth’s random walk.',
  },
  WorkqueueHotLoop: {
    afterOnsetMs: 5 * MINUTE_MS,
    afterCauseMs: 10 * MINUTE_MS,
    why: 'A loop wakes its keys again and again and does not stop by itself: five minutes tell it from a one-off flurry (a rollout touching every object once). From its cause, five minutes for the add rate to stand in full over its window.',
  },
  WorkqueueSaturated: {
    afterOnsetMs: 5 * MINUTE_MS,
    afterCauseMs: 20 * MINUTE_MS,
    why: 'Busy time at one or two workers swings by several percent over five minutes, so utilization is a quarter-hour reading; five more minutes confirm it. Saturation costs latency, not correctness: twenty minutes from its cause is soon enough to size the workers.',
  },
  WorkqueueSlowWork: {
    afterOnsetMs: 5 * MINUTE_MS,
    afterCauseMs: 10 * MINUTE_MS,
    why: 'A blocking call shows in the syncs that return slow, counted over five minutes, and must hold for five more: a one-off slow API response is not one.',
  },
  WorkqueuePersistentFailures: {
    afterOnsetMs: 15 * MINUTE_MS,
    afterCauseMs: 30 * MINUTE_MS,
    why: 'Retries back off exponentially (the per-item limiter of client-go and controller-runtime, 5 ms doubling, reaches its 1000 s cap after 18 failures, some 22 minutes of them), so a key failing for good is retried ever less often: its errors are a quarter-hour reading, held a quarter of an hour so that a dependency down for minutes and recovering is not paged.',
  },
  WorkqueueNotObservable: {
    afterOnsetMs: 5 * MINUTE_MS,
    afterCauseMs: 5 * MINUTE_MS,
    why: 'A target unreadable for five minutes is not a scrape that failed once (a restart, a slow page): without its metrics every other diagnosis is blind.',
  },
};

/** When a finding of `rule` is owed, for a problem in view from `onsetMs` and caused at `causeMs`. */
export function owedFromMs(rule: RuleId, onsetMs: number, causeMs: number): number {
  const budget = DETECTION_BUDGETS[rule];
  return Math.max(onsetMs + budget.afterOnsetMs, causeMs + budget.afterCauseMs) + ONSET_GRACE_MS;
}
