/**
 * A small deterministic generator of recordings (DESIGN.md §4: OpenMetrics, a timestamp in seconds
 * on every sample, `job`/`instance` labels, one block per family, `# EOF`) for tests of the history
 * and of parity with Prometheus. Same options → same bytes.
 *
 * Each target holds work queues of either label schema: controller-runtime (`controller`, `name`;
 * 12 decade buckets from 1e-8 s to 1000 s) or component-base (`name`; 10 buckets up to 10 s).
 * Counters and histograms can restart mid-run (a process restart: every counter drops back near
 * zero), samples can be missing for a stretch of scrapes (a scrape gap), and timestamps can be
 * jittered by whole milliseconds.
 */
import { formatGoFloat } from '../../src/exposition/float-text.js';
import { LABEL, SUFFIX, WORKQUEUE } from '../../src/metrics/names.js';
import { WORKQUEUE_BUCKETS, WORKQUEUE_HELP } from '../../src/queue/index.js';

export const CONTROLLER_RUNTIME_BUCKETS: readonly number[] = WORKQUEUE_BUCKETS['controller-runtime'];
export const COMPONENT_BASE_BUCKETS: readonly number[] = WORKQUEUE_BUCKETS['component-base'];

export interface QueueSpec {
  readonly name: string;
  /** Present for the controller-runtime schema; absent for component-base. */
  readonly controller?: string;
  /** Mean adds per second. Default 20. */
  readonly addsPerSecond?: number;
  /** Typical sync duration in seconds (median of the generated observations). Default 0.005. */
  readonly workSeconds?: number;
  /** Fraction of adds that are retries. Default 0.1. */
  readonly retryRatio?: number;
}

export interface TargetSpec {
  /** `undefined` leaves the label out (a recording without job/instance). */
  readonly job?: string;
  readonly instance?: string;
  readonly queues: readonly QueueSpec[];
  /** At this step every counter and histogram restarts from (nearly) zero. */
  readonly resetAtStep?: number;
  /** Steps `[from, to)` have no samples at all. */
  readonly gap?: { readonly fromStep: number; readonly toStep: number };
  /** Each timestamp is moved later by 0..jitterMs whole milliseconds. Default 0. */
  readonly jitterMs?: number;
  readonly seed?: number;
}

export interface RecordingSpec {
  /** Unix seconds of step 0. Default 1_700_000_000. */
  readonly startSec?: number;
  /** Seconds between steps. Default 15. */
  readonly intervalSec?: number;
  /** Number of steps. Default 160 (40 minutes at 15 s). */
  readonly steps?: number;
  readonly targets: readonly TargetSpec[];
}

export const DEFAULT_START_SEC = 1_700_000_000;

/** A deterministic pseudo-random sequence in [0, 1) (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface QueueState {
  spec: QueueSpec;
  buckets: readonly number[];
  adds: number;
  retries: number;
  depth: number;
  longest: number;
  unfinished: number;
  work: HistogramState;
  wait: HistogramState;
}

interface HistogramState {
  counts: number[];
  sum: number;
  count: number;
}

interface Row {
  labels: string;
  value: number;
}

/** Samples of one step of one target, per family. */
interface Step {
  timeMs: number;
  rows: Map<string, Row[]>;
}

const ADDS_FAMILY = WORKQUEUE.adds.slice(0, -SUFFIX.total.length);
const RETRIES_FAMILY = WORKQUEUE.retries.slice(0, -SUFFIX.total.length);

/** The families of a controller-runtime page, with the help texts its provider writes. */
const HELP = WORKQUEUE_HELP['controller-runtime'];
const FAMILIES: readonly { family: string; type: string; help: string }[] = [
  { family: ADDS_FAMILY, type: 'counter', help: HELP.adds },
  { family: WORKQUEUE.depth, type: 'gauge', help: HELP.depth },
  { family: WORKQUEUE.longestRunningProcessor, type: 'gauge', help: HELP.longestRunningProcessor },
  { family: WORKQUEUE.queueDuration, type: 'histogram', help: HELP.queueDuration },
  { family: RETRIES_FAMILY, type: 'counter', help: HELP.retries },
  { family: WORKQUEUE.unfinishedWork, type: 'gauge', help: HELP.unfinishedWork },
  { family: WORKQUEUE.workDuration, type: 'histogram', help: HELP.workDuration },
];

/** Renders a recording. */
export function generateRecording(spec: RecordingSpec): string {
  const startSec = spec.startSec ?? DEFAULT_START_SEC;
  const intervalSec = spec.intervalSec ?? 15;
  const steps = spec.steps ?? 160;
  const perTarget = spec.targets.map((t, i) => simulateTarget(t, i, startSec, intervalSec, steps));
  const lines: string[] = [];
  for (const f of FAMILIES) {
    lines.push(`# HELP ${f.family} ${f.help.replace(/\\/g, '\\\\')}`);
    lines.push(`# TYPE ${f.family} ${f.type}`);
    for (const targetSteps of perTarget) {
      for (const step of targetSteps) {
        const ts = formatSeconds(step.timeMs);
        for (const row of step.rows.get(f.family) ?? []) lines.push(`${row.labels} ${formatGoFloat(row.value)} ${ts}`);
      }
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

/** Unix milliseconds as OpenMetrics seconds with exactly three decimals. */
export function formatSeconds(ms: number): string {
  return `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;
}

/** The timestamp (unix ms, before OpenMetrics rounding) of `step` of target `spec`, as `generateRecording` writes it. */
export function stepTimeMs(spec: RecordingSpec, targetIndex: number, step: number): number {
  const t = spec.targets[targetIndex];
  if (t === undefined) throw new RangeError(`no target ${targetIndex}`);
  const jitter = jitterSequence(t, targetIndex, spec.steps ?? 160);
  return ((spec.startSec ?? DEFAULT_START_SEC) + step * (spec.intervalSec ?? 15)) * 1000 + (jitter[step] ?? 0);
}

function jitterSequence(t: TargetSpec, index: number, steps: number): number[] {
  const rnd = random((t.seed ?? 1) * 7919 + index);
  const out: number[] = [];
  for (let s = 0; s < steps; s++) out.push(t.jitterMs ? Math.floor(rnd() * (t.jitterMs + 1)) : 0);
  return out;
}

function simulateTarget(t: TargetSpec, index: number, startSec: number, intervalSec: number, steps: number): Step[] {
  const rnd = random((t.seed ?? 1) * 104729 + index);
  const jitter = jitterSequence(t, index, steps);
  const queues: QueueState[] = t.queues.map((q) => {
    const buckets = q.controller !== undefined ? CONTROLLER_RUNTIME_BUCKETS : COMPONENT_BASE_BUCKETS;
    return {
      spec: q,
      buckets,
      adds: 0,
      retries: 0,
      depth: 0,
      longest: 0,
      unfinished: 0,
      work: { counts: buckets.map(() => 0), sum: 0, count: 0 },
      wait: { counts: buckets.map(() => 0), sum: 0, count: 0 },
    };
  });
  const out: Step[] = [];
  for (let step = 0; step < steps; step++) {
    if (step === t.resetAtStep) {
      for (const q of queues) {
        q.adds = 0;
        q.retries = 0;
        q.work = { counts: q.buckets.map(() => 0), sum: 0, count: 0 };
        q.wait = { counts: q.buckets.map(() => 0), sum: 0, count: 0 };
      }
    }
    for (const q of queues) advance(q, intervalSec, rnd);
    if (t.gap !== undefined && step >= t.gap.fromStep && step < t.gap.toStep) continue;
    const rows = new Map<string, Row[]>();
    const push = (family: string, labels: string, value: number): void => {
      let list = rows.get(family);
      if (list === undefined) {
        list = [];
        rows.set(family, list);
      }
      list.push({ labels, value });
    };
    for (const q of queues) {
      const base = baseLabels(t, q.spec);
      push(ADDS_FAMILY, `${WORKQUEUE.adds}{${base}}`, q.adds);
      push(WORKQUEUE.depth, `${WORKQUEUE.depth}{${base}}`, q.depth);
      push(WORKQUEUE.longestRunningProcessor, `${WORKQUEUE.longestRunningProcessor}{${base}}`, q.longest);
      pushHistogram(push, WORKQUEUE.queueDuration, base, q.buckets, q.wait);
      push(RETRIES_FAMILY, `${WORKQUEUE.retries}{${base}}`, q.retries);
      push(WORKQUEUE.unfinishedWork, `${WORKQUEUE.unfinishedWork}{${base}}`, q.unfinished);
      pushHistogram(push, WORKQUEUE.workDuration, base, q.buckets, q.work);
    }
    out.push({ timeMs: (startSec + step * intervalSec) * 1000 + (jitter[step] ?? 0), rows });
  }
  return out;
}

function baseLabels(t: TargetSpec, q: QueueSpec): string {
  const pairs: [string, string][] = [];
  if (q.controller !== undefined) pairs.push([LABEL.controller, q.controller]);
  if (t.instance !== undefined) pairs.push([LABEL.instance, t.instance]);
  if (t.job !== undefined) pairs.push([LABEL.job, t.job]);
  pairs.push([LABEL.name, q.name]);
  return pairs.map(([k, v]) => `${k}="${v}"`).join(',');
}

function pushHistogram(
  push: (family: string, labels: string, value: number) => void,
  family: string,
  base: string,
  bounds: readonly number[],
  h: HistogramState,
): void {
  for (let i = 0; i < bounds.length; i++) {
    push(
      family,
      `${family}${SUFFIX.bucket}{${base},${LABEL.le}="${formatGoFloat(bounds[i] as number)}"}`,
      h.counts[i] as number,
    );
  }
  push(family, `${family}${SUFFIX.bucket}{${base},${LABEL.le}="+Inf"}`, h.count);
  push(family, `${family}${SUFFIX.sum}{${base}}`, h.sum);
  push(family, `${family}${SUFFIX.count}{${base}}`, h.count);
}

function advance(q: QueueState, intervalSec: number, rnd: () => number): void {
  const rate = q.spec.addsPerSecond ?? 20;
  const adds = Math.round(rate * intervalSec * (0.5 + rnd()));
  const retries = Math.round(adds * (q.spec.retryRatio ?? 0.1) * (0.5 + rnd()));
  q.adds += adds;
  q.retries += retries;
  q.depth = Math.max(0, Math.round(q.depth + (rnd() - 0.45) * 10));
  q.longest = Math.round(rnd() * 1000) / 1000;
  q.unfinished = Math.round(rnd() * q.longest * 2000) / 1000;
  const work = q.spec.workSeconds ?? 0.005;
  observe(q.work, q.buckets, adds, work, rnd);
  observe(q.wait, q.buckets, adds, work * 3, rnd);
}

/** Adds `n` observations around `median` (log-normal-ish spread), bucket by bucket. */
function observe(h: HistogramState, bounds: readonly number[], n: number, median: number, rnd: () => number): void {
  for (let k = 0; k < n; k++) {
    const value = median * 10 ** ((rnd() + rnd() + rnd() - 1.5) * 1.2);
    h.sum += value;
    h.count += 1;
    for (let i = 0; i < bounds.length; i++)
      if (value <= (bounds[i] as number)) h.counts[i] = (h.counts[i] as number) + 1;
  }
}

/** The recording without its `job` and `instance` labels, as a plain capture of a controller's `/metrics` would be. */
export function withoutTargetLabels(text: string): string {
  return text
    .split('\n')
    .map((line) =>
      line.startsWith('#')
        ? line
        : line.replace(/\{([^}]*)\}/, (_all, body: string) => {
            const kept = body.split(',').filter((pair) => !/^(job|instance)=/.test(pair));
            return kept.length > 0 ? `{${kept.join(',')}}` : '';
          }),
    )
    .join('\n');
}
