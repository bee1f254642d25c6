/**
 * The vocabulary signal definitions are written in: what a signal is, the windows it reads, and the
 * expression builders every definition shares (per-queue normalisation, rates, histogram quantiles and
 * means, REST-client and reconcile rates, and the reconcile error rate left after conflicts are charged).
 * `signals.ts` lists the signals themselves.
 */
import { CLIENT_GO, CONFLICT_CODE, CONTROLLER_RUNTIME, LABEL, SUFFIX } from '../metrics/names.js';
import {
  binary,
  clampMin,
  type Expr,
  eq,
  histogramQuantile,
  type LabelMatcher,
  num,
  quantileOverSubquery,
  rangeFn,
  sumWithout,
} from '../promql/expr.js';
import { type IdentityScope, joinMatching, labelsBeyond } from './identity.js';
import type { Unit } from './units.js';

/** Which series a signal's samples belong to, and so how they join to a queue. */
export type SignalScope = IdentityScope;

export type SignalDefinition = {
  readonly id: string;
  readonly title: string;
  readonly unit: Unit;
  readonly scope: SignalScope;
  /** How to read it, for dashboards and the rule catalog. */
  readonly description: string;
  readonly expr: Expr;
  /** Set for histogram quantiles: the histogram whose +Inf bucket makes the value a lower bound. */
  readonly quantileOf?: string;
  /** Set for quantiles: the quantile. */
  readonly quantile?: number;
};

export const MINUTE_MS = 60_000;
/** The window of rates and quantiles in reports, dashboards and rules. */
export const SIGNAL_WINDOW_MS = 5 * MINUTE_MS;
/** Trends (slopes) need a longer window than rates to rise above scrape noise. */
export const TREND_WINDOW_MS = 10 * MINUTE_MS;
/** Periodic batches need a window of several periods before their balance shows. */
export const BALANCE_WINDOW_MS = 30 * MINUTE_MS;
/** Rare but persistent events (errors of keys far into their backoff) need a longer window still. */
export const SUSTAINED_WINDOW_MS = 15 * MINUTE_MS;
/**
 * The share of a window the data must span for a reading over it to count. A range function over nine tenths of
 * its window reads what the full window reads for any lasting signal (Prometheus extrapolates the missing edge of
 * rate and increase the same way), and a history kept for exactly the window (the default retention) spans a
 * scrape less than it; over a fraction of the window, a slow trend is not yet seen.
 */
export const SPANNED_SHARE = 0.9;

/**
 * `reading and count_over_time(metric[window]) > count_over_time(metric[SPANNED_SHARE × window])`: `reading`, only
 * once the samples of `metric` span nine tenths of `window` (the window holds a sample older than its last nine
 * tenths, at any scrape interval up to a tenth of the window). Over the first minutes of a series a reading over the
 * window reads those minutes alone: a lowest depth that proves nothing of the window, a rate that each backend
 * extrapolates its own way.
 */
export function onceSpanned(reading: Expr, metric: string, windowMs: number): Expr {
  return binary(
    'and',
    reading,
    binary(
      '>',
      rangeFn('count_over_time', metric, windowMs),
      rangeFn('count_over_time', metric, SPANNED_SHARE * windowMs),
    ),
  );
}
/**
 * Longer than the default rate limiters' maximum backoff (1000 s in client-go's `DefaultControllerRateLimiter` and
 * in controller-runtime's default): a key that fails on every sync adds at least one error to every window this
 * long, however far into its backoff it is. Shorter windows fall between two retries of such keys.
 */
export const BACKOFF_CAP_WINDOW_MS = 20 * MINUTE_MS;

const W = SIGNAL_WINDOW_MS;
const WORKQUEUE_NOISE_LABELS = [LABEL.priority];

/** `sum without (priority) (inner)`: one series per queue. */
export function perQueue(inner: Expr): Expr {
  return sumWithout(WORKQUEUE_NOISE_LABELS, inner);
}

/**
 * The lowest of `metric` over the last minute, or over the last two where the minute holds no sample. At a scrape
 * interval of a minute (give or take its jitter) a one-minute window is now and then empty, and an empty window
 * would read as no floor at all, ending every `for` that asks for one; two minutes always hold a sample there. At
 * intervals up to half a minute the minute always holds one, and this is its floor.
 */
export function minuteFloor(metric: string, matchers: readonly LabelMatcher[] = []): Expr {
  return binary(
    'or',
    rangeFn('min_over_time', metric, MINUTE_MS, matchers),
    rangeFn('min_over_time', metric, 2 * MINUTE_MS, matchers),
  );
}

export function rate(metric: string, windowMs: number = W, matchers: readonly LabelMatcher[] = []): Expr {
  return rangeFn('rate', metric, windowMs, matchers);
}

/**
 * The slice a median rate reads its rates over: two minutes hold two scrapes at every interval up to a minute, so
 * every slice has a rate.
 */
const RATE_SLICE_MS = 2 * MINUTE_MS;

/**
 * The median over the signal window of a rate read over two-minute slices a minute apart (`perSlice(windowMs)`
 * builds the rate over a window): `quantile_over_time(0.5, (rate(x[2m]))[5m:1m])`, five slices. A steady rate reads
 * the same as over the whole window. A burst that passes at one instant (a resync queueing every object, an event
 * storm) lifts the two slices that hold it and leaves the median among the other three, where the five-minute rate
 * would carry the whole burst for five minutes: 2,000 objects resynced at once are 6.7 adds a second over the window.
 */
export function medianRate(perSlice: (windowMs: number) => Expr): Expr {
  return quantileOverSubquery(0.5, perSlice(RATE_SLICE_MS), W, MINUTE_MS);
}

export function histogramSeries(histogram: string, suffix: string): string {
  return histogram + suffix;
}

export function quantileSignal(
  id: string,
  title: string,
  histogram: string,
  q: number,
  description: string,
): SignalDefinition {
  return {
    id,
    title,
    unit: 's',
    scope: 'queue',
    description,
    expr: histogramQuantile(q, perQueue(rate(histogramSeries(histogram, SUFFIX.bucket)))),
    quantileOf: histogram,
    quantile: q,
  };
}

export function meanSignal(id: string, title: string, histogram: string, description: string): SignalDefinition {
  return {
    id,
    title,
    unit: 's',
    scope: 'queue',
    description,
    expr: binary(
      '/',
      perQueue(rate(histogramSeries(histogram, SUFFIX.sum))),
      perQueue(rate(histogramSeries(histogram, SUFFIX.count))),
    ),
  };
}

/**
 * REST client requests per second of one process matching `matchers`, and 0 (not "no data") for a process
 * whose REST client shows requests but none that match: a controller that never writes has a write rate of 0.
 */
export function restRequestRate(matchers: readonly LabelMatcher[], windowMs: number = W): Expr {
  const perProcess = (m: readonly LabelMatcher[]) =>
    sumWithout([LABEL.code, LABEL.method, LABEL.host], rate(CLIENT_GO.restClientRequests, windowMs, m));
  return binary('or', perProcess(matchers), binary('*', perProcess([]), num(0)));
}

/** Reconciles per second over `windowMs`, all results or those `matchers` select. */
export function reconcileRate(windowMs: number, matchers: readonly LabelMatcher[] = []): Expr {
  return sumWithout([LABEL.result], rate(CONTROLLER_RUNTIME.reconcileTotal, windowMs, matchers));
}

/**
 * Reconcile errors per second over `windowMs` that the controller requeues: all of them less the terminal errors
 * (`reconcile.TerminalError`, counted apart since controller-runtime v0.15), which controller-runtime never
 * requeues; without that counter every error counts.
 */
export function requeuedErrorRate(windowMs: number = W): Expr {
  const allErrors = rate(CONTROLLER_RUNTIME.reconcileErrors, windowMs);
  return binary(
    'or',
    clampMin(binary('-', allErrors, rate(CONTROLLER_RUNTIME.terminalReconcileErrors, windowMs)), 0),
    allErrors,
  );
}

/**
 * Reconcile errors per second over `windowMs` that neither the controller nor 409 Conflict answers explain.
 * A terminal error (`reconcile.TerminalError`, counted apart since controller-runtime v0.15) is the controller
 * declaring an object it cannot fix (invalid input): it is not retried and waits for the object to change, so
 * it is an answer, not a failure that persists; without that counter every error counts. An
 * optimistic-concurrency conflict fails one sync and succeeds on the retry, so each 409 accounts for at most
 * one transient error. The REST client counts conflicts per process, not per controller, so a controller is
 * charged with the process's conflicts in proportion to its share of the process's reconciles: a quiet
 * controller beside a busy writer is not credited with the writer's conflicts. Without a REST client
 * counter the errors stand as they are.
 */
export function unexplainedErrorRate(windowMs: number): Expr {
  const errors = requeuedErrorRate(windowMs);
  const reconciles = reconcileRate(windowMs);
  const shareOfProcess = binary(
    '/',
    reconciles,
    sumWithout(labelsBeyond('controller', 'process'), reconciles),
    PER_PROCESS,
  );
  const conflicts = restRequestRate([eq(LABEL.code, CONFLICT_CODE)], windowMs);
  const charged = binary('*', shareOfProcess, conflicts, PER_PROCESS);
  return binary('or', clampMin(binary('-', errors, charged), 0), errors);
}

/** Joins controller-level series (left) to their process's series (right). */
const PER_PROCESS = joinMatching('process', 'controller');

/** `unexplainedErrorRate / reconcileRate` over `windowMs`: the share of reconciles failing for lasting reasons. */
export function unexplainedErrorRatio(windowMs: number): Expr {
  return binary('/', unexplainedErrorRate(windowMs), reconcileRate(windowMs));
}

export function reconcileResultRate(result: string): Expr {
  return reconcileRate(W, [eq(LABEL.result, result)]);
}
