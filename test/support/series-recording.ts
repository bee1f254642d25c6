/**
 * Hand-shaped recordings for diagnosis tests: each series is a function of the time since the start, so a
 * test states exactly the depth, rates and slopes a condition reads (unlike `recordings.ts`, which simulates
 * plausible queues). The output follows the recording format (DESIGN.md §4): OpenMetrics, a timestamp in
 * seconds on every sample, `job`/`instance` labels, one block per family, `# EOF`.
 */
import { formatGoFloat } from '../../src/exposition/float-text.js';
import { CLIENT_GO, CONTROLLER_RUNTIME, SUFFIX, WORKQUEUE } from '../../src/metrics/names.js';
import { DEFAULT_START_SEC } from './recordings.js';

export type SeriesSpec = {
  /** The sample name, e.g. `workqueue_adds_total`. */
  readonly metric: string;
  readonly labels: Readonly<Record<string, string>>;
  /** The value at `t` seconds after the start. */
  readonly value: (t: number) => number;
};

export type SeriesRecordingSpec = {
  readonly series: readonly SeriesSpec[];
  /** Unix seconds of the first sample. Default `DEFAULT_START_SEC`. */
  readonly startSec?: number;
  /** Seconds between samples. Default 15. */
  readonly intervalSec?: number;
  /** Length of the recording in seconds. Default 40 minutes. */
  readonly durationSec?: number;
};

const FAMILY_SUFFIXES = [SUFFIX.total, SUFFIX.bucket, SUFFIX.sum, SUFFIX.count];
const HISTOGRAMS: readonly string[] = [WORKQUEUE.workDuration, WORKQUEUE.queueDuration];

/** Renders the series as a recording; `job` and `instance` must be among each series' labels. */
export function seriesRecording(spec: SeriesRecordingSpec): string {
  const start = spec.startSec ?? DEFAULT_START_SEC;
  const interval = spec.intervalSec ?? 15;
  const duration = spec.durationSec ?? 40 * 60;
  const families = new Map<string, SeriesSpec[]>();
  for (const s of spec.series) {
    const family = familyOf(s.metric);
    families.set(family, [...(families.get(family) ?? []), s]);
  }
  const lines: string[] = [];
  for (const [family, members] of families) {
    lines.push(`# TYPE ${family} ${typeOf(family, members[0]?.metric ?? family)}`);
    for (const s of members) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',');
      for (let t = 0; t <= duration; t += interval) {
        lines.push(`${s.metric}{${labels}} ${formatGoFloat(s.value(t))} ${start + t}`);
      }
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

/** Unix milliseconds of `t` seconds after the start of a recording made with `startSec`. */
export function timeMs(t: number, startSec = DEFAULT_START_SEC): number {
  return (startSec + t) * 1000;
}

function familyOf(metric: string): string {
  if (HISTOGRAMS.some((h) => metric.startsWith(h))) return HISTOGRAMS.find((h) => metric.startsWith(h)) ?? metric;
  const suffix = FAMILY_SUFFIXES.find((x) => metric.endsWith(x));
  return suffix === undefined ? metric : metric.slice(0, -suffix.length);
}

function typeOf(family: string, metric: string): string {
  if (HISTOGRAMS.includes(family)) return 'histogram';
  return metric.endsWith(SUFFIX.total) ? 'counter' : 'gauge';
}

/** Series of one work queue: depth, adds, retries and the work-duration histogram (one bucket), from rates. */
export function queueSeries(
  labels: Readonly<Record<string, string>>,
  shape: {
    readonly depth: (t: number) => number;
    /** Cumulative adds at `t`. */
    readonly adds: (t: number) => number;
    /** Cumulative completed syncs at `t`. */
    readonly completions: (t: number) => number;
    /** Cumulative retries at `t`. Default none. */
    readonly retries?: (t: number) => number;
    /** Seconds per sync. Default 0.005. */
    readonly syncSeconds?: number;
  },
): SeriesSpec[] {
  const sync = shape.syncSeconds ?? 0.005;
  const work = WORKQUEUE.workDuration;
  return [
    { metric: WORKQUEUE.depth, labels, value: shape.depth },
    { metric: WORKQUEUE.adds, labels, value: shape.adds },
    { metric: WORKQUEUE.retries, labels, value: shape.retries ?? (() => 0) },
    { metric: `${work}${SUFFIX.bucket}`, labels: { ...labels, le: '+Inf' }, value: shape.completions },
    { metric: `${work}${SUFFIX.sum}`, labels, value: (t) => shape.completions(t) * sync },
    { metric: `${work}${SUFFIX.count}`, labels, value: shape.completions },
  ];
}

/** controller-runtime's reconcile error counter of `controller`, rising at `perSecond`. */
export function reconcileErrors(
  target: Readonly<Record<string, string>>,
  controller: string,
  perSecond: number,
): SeriesSpec {
  return { metric: CONTROLLER_RUNTIME.reconcileErrors, labels: { ...target, controller }, value: (t) => perSecond * t };
}

/** The process's successful PATCH requests (API writes), rising at `perSecond`. */
export function apiWrites(target: Readonly<Record<string, string>>, perSecond: number): SeriesSpec {
  return {
    metric: CLIENT_GO.restClientRequests,
    labels: { ...target, code: '200', host: 'api:443', method: 'PATCH' },
    value: (t) => perSecond * t,
  };
}
