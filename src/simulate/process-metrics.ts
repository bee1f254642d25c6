/**
 * The non-work-queue metrics of a simulated process, with the names, labels, help texts and buckets
 * real processes expose: controller-runtime's per-controller metrics (v0.24: reconcile totals by result,
 * errors, terminal errors, panics, reconcile time, active workers, max concurrent reconciles; not
 * `reconcile_timeouts_total`, which no diagnosis reads), client-go's REST client counter and leader-election
 * gauge (with the `[ALPHA]` help prefix in the component-base flavor).
 */
import type { Registry } from 'prom-client';
import { CLIENT_GO, CONTROLLER_RUNTIME, LABEL, RECONCILE_RESULT } from '../metrics/names.js';
import { HistogramFamily, type Labels, type Tally, TallyFamily } from '../queue/index.js';
import type { Flavor } from './model.js';

/** controller-runtime's `reconcile_time_seconds` buckets. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The API server address as the REST client's `host` label shows it (the in-cluster service). */
export const API_HOST = '10.96.0.1:443';

/** One controller's controller-runtime series, labels bound. */
export interface ReconcileMetrics {
  success(): void;
  error(): void;
  /** A terminal error: `result="error"`, `reconcile_errors_total` and `terminal_reconcile_errors_total`. */
  terminalError(): void;
  requeue(): void;
  requeueAfter(): void;
  observe(seconds: number): void;
  workerStarted(): void;
  workerFinished(): void;
}

/**
 * A process's series are plain numbers on the hot path (a sync touches several), shown to the registry
 * only when it is read (`TallyFamily`, `HistogramFamily`).
 */
export class ProcessMetrics {
  private readonly reconcileTime: HistogramFamily | undefined;
  private readonly counters = new Map<string, TallyFamily>();
  private readonly gauges = new Map<string, TallyFamily>();
  /** `rest_client_requests_total` series by `method code`. */
  private readonly rest = new Map<string, Tally>();

  constructor(
    registry: Registry,
    readonly flavor: Flavor,
  ) {
    const counter = (name: string, help: string, labelNames: string[]): void => {
      this.counters.set(name, new TallyFamily(registry, 'counter', { name, help, labelNames }));
    };
    const gauge = (name: string, help: string, labelNames: string[]): void => {
      this.gauges.set(name, new TallyFamily(registry, 'gauge', { name, help, labelNames }));
    };
    if (flavor === 'controller-runtime') {
      counter(CONTROLLER_RUNTIME.reconcileTotal, 'Total number of reconciliations per controller', [
        LABEL.controller,
        LABEL.result,
      ]);
      counter(CONTROLLER_RUNTIME.reconcileErrors, 'Total number of reconciliation errors per controller', [
        LABEL.controller,
      ]);
      counter(
        CONTROLLER_RUNTIME.terminalReconcileErrors,
        'Total number of terminal reconciliation errors per controller',
        [LABEL.controller],
      );
      counter(CONTROLLER_RUNTIME.reconcilePanics, 'Total number of reconciliation panics per controller', [
        LABEL.controller,
      ]);
      this.reconcileTime = new HistogramFamily(
        registry,
        {
          name: CONTROLLER_RUNTIME.reconcileTime,
          help: 'Length of time per reconciliation per controller',
          labelNames: [LABEL.controller],
        },
        RECONCILE_TIME_BUCKETS,
      );
      gauge(CONTROLLER_RUNTIME.activeWorkers, 'Number of currently used workers per controller', [LABEL.controller]);
      gauge(CONTROLLER_RUNTIME.maxConcurrentReconciles, 'Maximum number of concurrent reconciles per controller', [
        LABEL.controller,
      ]);
    }
    const alpha = flavor === 'component-base' ? '[ALPHA] ' : '';
    counter(
      CLIENT_GO.restClientRequests,
      `${alpha}Number of HTTP requests, partitioned by status code, method, and host.`,
      [LABEL.code, LABEL.host, LABEL.method],
    );
    gauge(
      CLIENT_GO.leaderElectionMasterStatus,
      `${alpha}Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, ` +
        "1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      [LABEL.name],
    );
  }

  /** Whether `controller_runtime_*` families exist in this process. */
  get hasReconcileMetrics(): boolean {
    return this.reconcileTime !== undefined;
  }

  setLeader(lease: string, leader: boolean): void {
    this.series(this.gauges, CLIENT_GO.leaderElectionMasterStatus, { [LABEL.name]: lease }).value = leader ? 1 : 0;
  }

  apiRequest(method: string, code: string): void {
    this.restTally(method, code).value++;
  }

  /**
   * A counter of `rest_client_requests_total{method,code}` for a hot path (no lookup per request). As with
   * `apiRequest`, the series appears with the first request, as client-go's does.
   */
  restCounter(method: string, code: string): () => void {
    let tally: Tally | undefined;
    return () => {
      tally ??= this.restTally(method, code);
      tally.value++;
    };
  }

  private restTally(method: string, code: string): Tally {
    const key = `${method} ${code}`;
    let tally = this.rest.get(key);
    if (tally === undefined) {
      tally = this.series(this.counters, CLIENT_GO.restClientRequests, {
        [LABEL.code]: code,
        [LABEL.host]: API_HOST,
        [LABEL.method]: method,
      });
      this.rest.set(key, tally);
    }
    return tally;
  }

  /**
   * Initializes one controller's series at zero, as controller-runtime does when a controller
   * starts, and returns its recorder; undefined in the component-base flavor. Controller names are
   * unique in a process (controller-runtime refuses a second of one name); two recorders of one name
   * would share its series.
   */
  controller(name: string, maxConcurrentReconciles: number): ReconcileMetrics | undefined {
    const time = this.reconcileTime;
    if (time === undefined) return undefined;
    const c = { [LABEL.controller]: name };
    const result = (value: string): Tally =>
      this.series(this.counters, CONTROLLER_RUNTIME.reconcileTotal, {
        [LABEL.controller]: name,
        [LABEL.result]: value,
      });
    const success = result(RECONCILE_RESULT.success);
    const error = result(RECONCILE_RESULT.error);
    const requeue = result(RECONCILE_RESULT.requeue);
    const requeueAfter = result(RECONCILE_RESULT.requeueAfter);
    const errors = this.series(this.counters, CONTROLLER_RUNTIME.reconcileErrors, c);
    const terminal = this.series(this.counters, CONTROLLER_RUNTIME.terminalReconcileErrors, c);
    this.series(this.counters, CONTROLLER_RUNTIME.reconcilePanics, c);
    const active = this.series(this.gauges, CONTROLLER_RUNTIME.activeWorkers, c);
    this.series(this.gauges, CONTROLLER_RUNTIME.maxConcurrentReconciles, c).value = maxConcurrentReconciles;
    const reconcileTime = time.series(c);
    return {
      success: () => {
        success.value++;
      },
      error: () => {
        error.value++;
        errors.value++;
      },
      terminalError: () => {
        error.value++;
        errors.value++;
        terminal.value++;
      },
      requeue: () => {
        requeue.value++;
      },
      requeueAfter: () => {
        requeueAfter.value++;
      },
      observe: (seconds) => {
        reconcileTime.observe(seconds);
      },
      workerStarted: () => {
        active.value++;
      },
      workerFinished: () => {
        active.value--;
      },
    };
  }

  /** The series of `family` with `labels`, created at zero. */
  private series(families: Map<string, TallyFamily>, family: string, labels: Labels): Tally {
    return families.get(family)!.series(labels);
  }
}
