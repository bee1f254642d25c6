/**
 * The service's own metrics, served on `/metrics`: how scraping and evaluation go, and one series per
 * active finding so that dashboards (and teams that prefer it) can use the service's verdicts.
 *
 * Contract:
 * - `workqueue_doctor_finding{rule,severity,target,name,controller}` is 1 for every firing finding of the
 *   latest report and absent otherwise: a resolved finding's series disappears at the next evaluation, a pending
 *   one has none yet. A queue without a `name` or `controller` label has the label empty.
 * - `workqueue_doctor_pending_finding_fires_at_seconds{rule,severity,target,name,controller}` is, for every
 *   pending finding, the unix time it fires if its condition keeps holding.
 * - `workqueue_doctor_unknown_rule{rule,target,name,controller}` is 1 for every rule that could not be judged
 *   for a queue (the report's `unknown`, with the reason).
 * - `workqueue_doctor_queues{status}` counts the latest report's queues by status (every status present,
 *   0 when none) once there is a report.
 * - `workqueue_doctor_target_up{target}` is 1 when the target's last scrape succeeded, 0 otherwise (also
 *   before its first scrape); only targets currently scraped have a series.
 * - Scrape durations and errors are per target (`job/instance`), errors also per error code.
 * - `workqueue_doctor_state_write_errors_total` counts failed writes of the state file (`--state-dir`); it stays
 *   0 without one.
 * - The process's own metrics carry the standard names of prom-client's default metrics (`process_*`,
 *   `nodejs_*`); until 0.1.x they were prefixed `workqueue_doctor_`, names that are no longer served.
 * - Gauges read the report and the scrape health when scraped, so they are never older than the report.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { type Finding, isFiring, type QueueReport, type QueueStatus, type Report } from '../diagnosis/report.js';
import { QUEUE_STATUSES } from '../diagnosis/report-schema.js';
import { DOCTOR, DOCTOR_FINDING_LABELS, DOCTOR_UNKNOWN_LABELS, LABEL } from '../metrics/names.js';
import type { EvaluationOutcome } from './diagnosis-service.js';

/** What the gauges read at collect time; each may be set late (the source exists before the service). */
export interface MetricsReadings {
  report?: () => Report | undefined;
  /** The scraped targets by name (`job/instance`) and whether their last scrape succeeded. */
  targets?: () => ReadonlyArray<{ readonly target: string; readonly up: boolean }>;
}

export interface ServiceMetrics {
  readonly registry: Registry;
  /** Records one scrape. */
  scrape(event: {
    readonly target: string;
    readonly durationMs: number;
    readonly ok: boolean;
    readonly errorCode?: string;
  }): void;
  /** Records one evaluation. */
  evaluation(outcome: EvaluationOutcome): void;
  /** Records one write of the state file (`--state-dir`). */
  stateWrite(outcome: { readonly ok: boolean }): void;
  /** Connects the gauges to the report and the scrape health. */
  read(readings: MetricsReadings): void;
}

/**
 * How often the event-loop delay behind `nodejs_eventloop_lag_p50_seconds` and its siblings is sampled, in ms. Each
 * sample is a timer wake-up of the whole process: prom-client's default (10 ms) costs about two thirds of a percent
 * of a core on its own (measured: 45 CPU ticks a minute in a process doing nothing else, against 8 at 100 ms), as
 * much as scraping and diagnosing a hundred queues. At 100 ms a delay that blocks the loop for longer than that
 * (a long evaluation slice, a large page parsed on the main thread) is still sampled every time it happens.
 */
const EVENT_LOOP_SAMPLE_MS = 100;

export type ServiceMetricsOptions = {
  /**
   * Add prom-client's process and Node.js metrics under their standard names (`process_cpu_seconds_total`,
   * `process_resident_memory_bytes`, `nodejs_heap_size_used_bytes`, ...). Default true.
   */
  readonly processMetrics?: boolean;
};

export function createServiceMetrics(options: ServiceMetricsOptions = {}): ServiceMetrics {
  const registry = new Registry();
  const readings: MetricsReadings = {};
  // Standard names (process_cpu_seconds_total, process_resident_memory_bytes, nodejs_*), without a prefix, so
  // that stock process and Node.js dashboards see the service.
  if (options.processMetrics !== false)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });

  const scrapeDuration = new Histogram({
    name: DOCTOR.scrapeDuration,
    help: 'Time to fetch, parse and store one scrape of a target.',
    labelNames: [LABEL.target] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const scrapeErrors = new Counter({
    name: DOCTOR.scrapeErrors,
    help: 'Failed scrapes of a target, by error code (timeout, connection, http_status, parse_error, ...).',
    labelNames: [LABEL.target, LABEL.code] as const,
    registers: [registry],
  });
  new Gauge({
    name: DOCTOR.targetUp,
    help: '1 when the last scrape of the target succeeded, else 0.',
    labelNames: [LABEL.target] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const t of readings.targets?.() ?? []) this.set({ [LABEL.target]: t.target }, t.up ? 1 : 0);
    },
  });
  const evaluationDuration = new Histogram({
    name: DOCTOR.evaluationDuration,
    help: 'Time to evaluate every diagnosis over every queue once.',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const evaluationErrors = new Counter({
    name: DOCTOR.evaluationErrors,
    help: 'Evaluations that failed; the previous report is kept.',
    registers: [registry],
  });
  const stateWriteErrors = new Counter({
    name: DOCTOR.stateWriteErrors,
    help: 'Writes of the state file (--state-dir) that failed; the previous file is kept.',
    registers: [registry],
  });
  new Gauge({
    name: DOCTOR.queues,
    help: 'Queues in the latest report, by status.',
    labelNames: [LABEL.status] as const,
    registers: [registry],
    collect() {
      this.reset();
      const report = readings.report?.();
      if (report === undefined) return;
      const counts = new Map<QueueStatus, number>(QUEUE_STATUSES.map((s) => [s, 0]));
      for (const q of report.queues) counts.set(q.status, (counts.get(q.status) ?? 0) + 1);
      for (const [status, n] of counts) this.set({ [LABEL.status]: status }, n);
    },
  });
  new Gauge({
    name: DOCTOR.finding,
    help: '1 for every active (firing) finding of the latest evaluation (no series once resolved or while pending).',
    labelNames: DOCTOR_FINDING_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const { queue, finding } of findingsOf(readings.report?.())) {
        if (isFiring(finding)) this.set(findingLabels(queue, finding), 1);
      }
    },
  });
  new Gauge({
    name: DOCTOR.pendingFinding,
    help: 'For every pending finding of the latest evaluation (its condition holds, its for has not elapsed): the unix time it fires if the condition keeps holding.',
    labelNames: DOCTOR_FINDING_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const { queue, finding } of findingsOf(readings.report?.())) {
        if (!isFiring(finding) && finding.firesAt !== undefined)
          this.set(findingLabels(queue, finding), Date.parse(finding.firesAt) / 1000);
      }
    },
  });
  new Gauge({
    name: DOCTOR.unknownRule,
    help: '1 for every rule that could not be judged for a queue at the latest evaluation (too little data; the reason is in the report).',
    labelNames: DOCTOR_UNKNOWN_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const q of readings.report?.()?.queues ?? []) {
        for (const u of q.unknown ?? []) this.set({ [LABEL.rule]: u.rule, ...queueLabels(q) }, 1);
      }
    },
  });

  return {
    registry,
    scrape(event) {
      scrapeDuration.observe({ [LABEL.target]: event.target }, event.durationMs / 1000);
      if (!event.ok) scrapeErrors.inc({ [LABEL.target]: event.target, [LABEL.code]: event.errorCode ?? 'internal' });
    },
    evaluation(outcome) {
      evaluationDuration.observe(outcome.durationMs / 1000);
      if (!outcome.ok) evaluationErrors.inc();
    },
    stateWrite(outcome) {
      if (!outcome.ok) stateWriteErrors.inc();
    },
    read(next) {
      if (next.report !== undefined) readings.report = next.report;
      if (next.targets !== undefined) readings.targets = next.targets;
    },
  };
}

function queueLabels(q: QueueReport): Record<string, string> {
  return {
    [LABEL.target]: q.queue.target,
    [LABEL.name]: q.queue.name ?? '',
    [LABEL.controller]: q.queue.controller ?? '',
  };
}

function findingLabels(q: QueueReport, f: Finding): Record<string, string> {
  return { [LABEL.rule]: f.rule, [LABEL.severity]: f.severity, ...queueLabels(q) };
}

function* findingsOf(report: Report | undefined): Generator<{ queue: QueueReport; finding: Finding }> {
  for (const queue of report?.queues ?? []) for (const finding of queue.findings) yield { queue, finding };
}
