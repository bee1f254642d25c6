/**
 * The history the page's charts draw, whatever computed it: one time axis, each queue's values of any signal at
 * those times, and the identity labels of each queue's series. The page route builds it from the service's
 * series (`fromSeries`); the page benchmark builds one of its own.
 */
import type { Labels } from '../../promql/vector.js';
import type { SeriesSet, SeriesSignalId, SignalSeries } from '../../service/queue-series.js';

export type ChartData = {
  /** Evaluation times (unix milliseconds), ascending, evenly spaced. */
  readonly timesMs: readonly number[];
  readonly stepMs: number;
  /** A queue's values of a signal at `timesMs`; undefined when they were not computed. */
  values(queueId: string, signal: string): readonly (number | null)[] | undefined;
  /** The identity labels of a queue's series; undefined for a queue without series. */
  labels(queueId: string): Labels | undefined;
};

/** The chart signals of `set`, and the other signals of `others` (computed at the same times, for some queues). */
export function fromSeries(set: SeriesSet, others?: SignalSeries): ChartData {
  return {
    timesMs: set.timesMs,
    stepMs: set.stepMs,
    values: (queueId, signal) =>
      set.queues.get(queueId)?.[signal as SeriesSignalId] ?? others?.get(queueId)?.[signal] ?? undefined,
    labels: (queueId) => set.labels.get(queueId),
  };
}
