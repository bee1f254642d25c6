/**
 * The recent history of a few signals per queue, for the page's charts and `GET /api/v1/queues/{id}/series`:
 * each chart signal's expression (the same tree the diagnoses read) evaluated through the source's backend at
 * evenly spaced times over the chart window, ending at the report's evaluation time.
 *
 * Contract:
 * - Computed at most once per report, for every queue of it at once, on first demand; requests that arrive
 *   meanwhile share the computation, and a new report replaces it. A failed computation is retried on the
 *   next demand.
 * - At most `maxPoints` times per series: the step widens when the window holds more.
 * - A value is null where the signal has no sample (no data yet, metric absent, NaN or infinite).
 * - Which charts a finding gets comes from its evidence (`chartsForEvidence`): a chart belongs to the
 *   signals it draws and their relatives (the depth chart to every depth signal, ...).
 * - Any other signal's history (`signalsFor`: what the page charts to explain a finding) comes at the same times
 *   for the queues with findings (only they are explained; the values of a fleet's every queue would be held for
 *   nothing), each signal evaluated at most once per report however many requests ask for it.
 * - `labels` holds each queue's identity labels as its series carry them (target labels such as a namespace
 *   included), so the page can place a queue and link it to a dashboard.
 */

import { identityOf, queueKey, scopeKey } from '../diagnosis/identity.js';
import type { Report } from '../diagnosis/report.js';
import { SIGNAL_BY_ID, type SignalDefinition } from '../diagnosis/signals.js';
import type { Unit } from '../diagnosis/units.js';
import { QUEUE_FAMILIES } from '../metrics/names.js';
import type { DiagnosisBackend } from '../promql/backend.js';
import type { Labels } from '../promql/vector.js';

/** The signals the charts draw, in the order of their charts. */
export const SERIES_SIGNALS = [
  'depth',
  'addRate',
  'completionRate',
  'busyWorkers',
  'maxWorkers',
  'longestRunning',
  'reconcileErrorRate',
] as const;
export type SeriesSignalId = (typeof SERIES_SIGNALS)[number];

export type ChartDefinition = {
  readonly id: string;
  readonly title: string;
  readonly unit: Unit;
  /** What the chart draws, one line each. */
  readonly signals: readonly SeriesSignalId[];
  /** Evidence entries the chart shows the history of (besides its own signals). */
  readonly related: readonly string[];
};

export const CHARTS: readonly ChartDefinition[] = [
  {
    id: 'depth',
    title: 'Depth',
    unit: 'items',
    signals: ['depth'],
    related: [
      'depthAvg',
      'depthMin',
      'depthFloor',
      'depthSlope',
      'depthTrend',
      'lowPriorityDepth',
      'lowPriorityDepthSlope',
      'normalPriorityDepthFloor',
      'normalPriorityDepthSlope',
      'queueLatencyP50',
      'queueLatencyP90',
      'queueLatencyP99',
      'queueLatencyMean',
      'timeToDrain',
    ],
  },
  {
    id: 'throughput',
    title: 'Adds and completions',
    unit: '1/s',
    signals: ['addRate', 'completionRate'],
    related: ['retryRate', 'sustainedRetryRate', 'writeRate', 'failedWriteRate', 'writesPerAdd', 'reconcileRate'],
  },
  {
    id: 'workers',
    title: 'Busy and max workers',
    unit: 'workers',
    signals: ['busyWorkers', 'maxWorkers'],
    related: ['sustainedBusyWorkers', 'activeWorkers', 'utilization', 'recommendedWorkers', 'workersNeeded'],
  },
  {
    id: 'longestRunning',
    title: 'Longest-running sync',
    unit: 's',
    signals: ['longestRunning'],
    related: [
      'longestRunningMax',
      'longestRunningGrowth',
      'unfinishedWork',
      'unfinishedWorkGrowth',
      'slowSyncShare',
      'stuckWorkers',
    ],
  },
  {
    id: 'errors',
    title: 'Reconcile errors',
    unit: '1/s',
    signals: ['reconcileErrorRate'],
    related: [
      'sustainedErrorRate',
      'errorRatio',
      'sustainedErrorRatio',
      'terminalErrorRate',
      'conflictRate',
      'failedRequestRate',
    ],
  },
];

/** Charts of a queue without findings: what shows whether it keeps up. */
export const OVERVIEW_CHARTS: readonly string[] = ['depth', 'throughput'];
/** A finding gets at most this many charts. */
export const MAX_CHARTS_PER_FINDING = 3;

const CHART_OF_SIGNAL: ReadonlyMap<string, ChartDefinition> = new Map(
  CHARTS.flatMap((chart) => [...chart.signals, ...chart.related].map((id) => [id, chart] as const)),
);

/** The charts of an evidence map, in the order of the evidence (most important first), at most `max`. */
export function chartsForEvidence(
  evidence: Readonly<Record<string, unknown>>,
  max = MAX_CHARTS_PER_FINDING,
): ChartDefinition[] {
  const out: ChartDefinition[] = [];
  for (const id of Object.keys(evidence)) {
    const chart = CHART_OF_SIGNAL.get(id);
    if (chart !== undefined && !out.includes(chart)) out.push(chart);
    if (out.length >= max) break;
  }
  return out;
}

export const CHART_BY_ID: ReadonlyMap<string, ChartDefinition> = new Map(CHARTS.map((c) => [c.id, c]));

/** The series of every queue of one report. */
export type SeriesSet = {
  readonly evaluatedAt: string;
  readonly stepMs: number;
  /** Evaluation times (unix milliseconds), ascending, evenly spaced. */
  readonly timesMs: readonly number[];
  /** By queue id: each chart signal's values at `timesMs`. */
  readonly queues: ReadonlyMap<string, Readonly<Record<SeriesSignalId, readonly (number | null)[]>>>;
  /** By queue id: the identity labels the queue's series carry. */
  readonly labels: ReadonlyMap<string, Labels>;
};

/** Values at a `SeriesSet`'s times of any signals, by queue id, then signal id (absent: no such queue). */
export type SignalSeries = ReadonlyMap<string, Readonly<Record<string, readonly (number | null)[]>>>;

export type QueueSeriesOptions = {
  /** The backend the diagnoses read (the source's). */
  readonly backend: DiagnosisBackend;
  /** How far back the charts reach; default 30 minutes. */
  readonly windowMs?: number;
  /** Smallest step between points; default 30 s (the rule evaluation step). */
  readonly stepMs?: number;
  /** Most points per series; default 121 (30 minutes at 15 s). */
  readonly maxPoints?: number;
};

export interface QueueSeries {
  /** The series of `report`'s queues, computed once per report. */
  forReport(report: Report): Promise<SeriesSet>;
  /**
   * The values of `signals` (ids of `SIGNAL_BY_ID`; others are left out) for `report`'s queues with findings at
   * the times of `forReport(report)`, each signal evaluated once per report.
   */
  signalsFor(report: Report, signals: readonly string[]): Promise<SignalSeries>;
}

export const DEFAULT_SERIES_WINDOW_MS = 30 * 60_000;
export const DEFAULT_SERIES_STEP_MS = 30_000;
export const DEFAULT_SERIES_MAX_POINTS = 121;

export function createQueueSeries(options: QueueSeriesOptions): QueueSeries {
  const windowMs = options.windowMs ?? DEFAULT_SERIES_WINDOW_MS;
  const maxPoints = Math.max(2, options.maxPoints ?? DEFAULT_SERIES_MAX_POINTS);
  const stepMs = Math.max(options.stepMs ?? DEFAULT_SERIES_STEP_MS, Math.ceil(windowMs / (maxPoints - 1)));
  type Entry = {
    readonly report: Report;
    readonly frame: Promise<SeriesFrame>;
    readonly set: Promise<SeriesSet>;
    /** Other signals' values, by signal id, computed on demand. */
    readonly others: Map<string, Promise<ReadonlyMap<string, (number | null)[]>>>;
  };
  let current: Entry | undefined;
  const entryFor = (report: Report): Entry => {
    if (current?.report !== report) {
      const frame = seriesFrame(options.backend, report, windowMs, stepMs);
      const set = frame.then(async (f) => {
        const values = await evaluateSignals(options.backend, f, SERIES_SIGNALS);
        const queues = new Map<string, Record<SeriesSignalId, (number | null)[]>>();
        for (const id of f.queues.keys()) {
          queues.set(
            id,
            Object.fromEntries(SERIES_SIGNALS.map((s, d) => [s, values[d]?.get(id) ?? []])) as Record<
              SeriesSignalId,
              (number | null)[]
            >,
          );
        }
        return { evaluatedAt: report.evaluatedAt, stepMs, timesMs: f.timesMs, queues, labels: f.queues };
      });
      const entry: Entry = { report, frame, set, others: new Map() };
      current = entry;
      set.catch(() => {
        if (current === entry) current = undefined;
      });
    }
    return current;
  };
  return {
    forReport: (report) => entryFor(report).set,
    async signalsFor(report, signals) {
      const entry = entryFor(report);
      const wanted = [...new Set(signals)].filter((id) => SIGNAL_BY_ID.has(id));
      for (const id of wanted) {
        if (entry.others.has(id)) continue;
        const values = entry.frame.then(
          async (f) => (await evaluateSignals(options.backend, withFindings(f, report), [id]))[0] ?? new Map(),
        );
        entry.others.set(id, values);
        // A failed signal is asked again on the next demand.
        values.catch(() => {
          if (entry.others.get(id) === values) entry.others.delete(id);
        });
      }
      const frame = await entry.frame;
      const values = await Promise.all(
        wanted.map((id) => entry.others.get(id) as Promise<ReadonlyMap<string, (number | null)[]>>),
      );
      const out = new Map<string, Record<string, (number | null)[]>>();
      for (const queueId of withFindings(frame, report).queues.keys()) {
        out.set(queueId, Object.fromEntries(wanted.map((id, d) => [id, values[d]?.get(queueId) ?? []])));
      }
      return out;
    },
  };
}

/** The times of a report's series and its queues, with the identity labels their series carry. */
type SeriesFrame = {
  readonly timesMs: readonly number[];
  readonly queues: ReadonlyMap<string, Labels>;
};

async function seriesFrame(
  backend: DiagnosisBackend,
  report: Report,
  windowMs: number,
  stepMs: number,
): Promise<SeriesFrame> {
  const atMs = Date.parse(report.evaluatedAt);
  const count = Math.floor(windowMs / stepMs) + 1;
  const timesMs = Array.from({ length: count }, (_, i) => atMs - (count - 1 - i) * stepMs);
  const fromMs = (timesMs[0] ?? atMs) - stepMs;

  // The queues of the report, with the labels their series carry (as the engine finds them).
  const wanted = new Set(report.queues.map((q) => q.id));
  const seen = new Set<string>();
  const queues = new Map<string, Labels>();
  for (const metric of QUEUE_FAMILIES) {
    for (const labels of await backend.seriesLabels(metric, fromMs, atMs)) {
      const key = queueKey(labels);
      if (seen.has(key)) continue;
      seen.add(key);
      const identity = identityOf(labels);
      if (wanted.has(identity.id) && !queues.has(identity.id)) queues.set(identity.id, identity.labels);
    }
  }
  return { timesMs, queues };
}

/** The frame of `report`'s queues with findings. */
function withFindings(frame: SeriesFrame, report: Report): SeriesFrame {
  const explained = new Set(report.queues.filter((q) => q.findings.length > 0).map((q) => q.id));
  return { timesMs: frame.timesMs, queues: new Map([...frame.queues].filter(([id]) => explained.has(id))) };
}

/** Each signal's values at the frame's times, by queue id (null where the signal has no sample). */
async function evaluateSignals(
  backend: DiagnosisBackend,
  frame: SeriesFrame,
  ids: readonly string[],
): Promise<Array<Map<string, (number | null)[]>>> {
  const definitions = ids.map((id) => SIGNAL_BY_ID.get(id) as SignalDefinition);
  const vectors = await Promise.all(definitions.map((d) => backend.evaluate(d.expr, frame.timesMs)));
  const count = frame.timesMs.length;
  return definitions.map((definition, d) => {
    const out = new Map<string, (number | null)[]>();
    // Many queues can share one controller- or process-scope series: index the queues by scope key.
    const queuesByScope = new Map<string, (number | null)[][]>();
    for (const [id, labels] of frame.queues) {
      const values = new Array<number | null>(count).fill(null);
      out.set(id, values);
      const key = scopeKey(labels, definition.scope);
      const list = queuesByScope.get(key) ?? [];
      list.push(values);
      queuesByScope.set(key, list);
    }
    (vectors[d] ?? []).forEach((vector, t) => {
      for (const sample of vector) {
        if (!Number.isFinite(sample.value)) continue;
        for (const values of queuesByScope.get(scopeKey(sample.labels, definition.scope)) ?? []) {
          values[t] = sample.value;
        }
      }
    });
    return out;
  });
}
