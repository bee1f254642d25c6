/**
 * The non-work-queue metrics of a simulated process, with the names, labels, help texts and buckets
 * real processes expose: controller-runtime's per-controller metrics (v0.24), client-go's REST client
 * counter and leader-election gauge (with the `[ALPHA]` help prefix in the component-base flavor).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CLIENT_GO, CONTROLLER_RUNTIME, LABEL, RECONCILE_RESULT } from '../metrics/names.js';
import type { Flavor } from './model.js';

/** controller-runtime's `reconcile_time_seconds` buckets. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The API server address as the REST client's `host` label shows it (the in-cluster service). */
export const API_HOST = '10.96.0.1:443';

type Labels = Record<string, string>;

/** One controller's controller-runtime series, labels bound. */
export interface ReconcileMetrics {
  success(): void;
  error(): void;
  requeue(): void;
  requeueAfter(): void;
  observe(seconds: number): void;
  workerStarted(): void;
  workerFinished(): void;
}

export class ProcessMetrics {
  private readonly reconcileTotal: Counter<string> | undefined;
  private readonly reconcileErrors: Counter<string> | undefined;
  private readonly reconcilePanics: Counter<string> | undefined;
  private readonly reconcileTime: Histogram<string> | undefined;
  private readonly activeWorkers: Gauge<string> | undefined;
  private readonly maxConcurrent: Gauge<string> | undefined;
  private readonly restRequests: Counter<string>;
  private readonly leaderStatus: Gauge<string>;
  /** Bound label objects of `rest_client_requests_total`, by `method code`. */
  private readonly restLabels = new Map<string, Labels>();

  constructor(
    registry: Registry,
    readonly flavor: Flavor,
  ) {
    const registers = [registry];
    if (flavor === 'controller-runtime') {
      this.reconcileTotal = new Counter({
        name: CONTROLLER_RUNTIME.reconcileTotal,
        help: 'Total number of reconciliations per controller',
        labelNames: [LABEL.controller, LABEL.result],
        registers,
      });
      this.reconcileErrors = new Counter({
        name: CONTROLLER_RUNTIME.reconcileErrors,
        help: 'Total number of reconciliation errors per controller',
        labelNames: [LABEL.controller],
        registers,
      });
      this.reconcilePanics = new Counter({
        name: CONTROLLER_RUNTIME.reconcilePanics,
        help: 'Total number of reconciliation panics per controller',
        labelNames: [LABEL.controller],
        registers,
      });
      this.reconcileTime = new Histogram({
        name: CONTROLLER_RUNTIME.reconcileTime,
        help: 'Length of time per reconciliation per controller',
        labelNames: [LABEL.controller],
        buckets: [...RECONCILE_TIME_BUCKETS],
        registers,
      });
      this.activeWorkers = new Gauge({
        name: CONTROLLER_RUNTIME.activeWorkers,
        help: 'Number of currently used workers per controller',
        labelNames: [LABEL.controller],
        registers,
      });
      this.maxConcurrent = new Gauge({
        name: CONTROLLER_RUNTIME.maxConcurrentReconciles,
        help: 'Maximum number of concurrent reconciles per controller',
        labelNames: [LABEL.controller],
        registers,
      });
    }
    const alpha = flavor === 'component-base' ? '[ALPHA] ' : '';
    this.restRequests = new Counter({
      name: CLIENT_GO.restClientRequests,
      help: `${alpha}Number of HTTP requests, partitioned by status code, method, and host.`,
      labelNames: [LABEL.code, LABEL.host, LABEL.method],
      registers,
    });
    this.leaderStatus = new Gauge({
      name: CLIENT_GO.leaderElectionMasterStatus,
      help:
        `${alpha}Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, ` +
        "1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      labelNames: [LABEL.name],
      registers,
    });
  }

  /** Whether `controller_runtime_*` families exist in this process. */
  get hasReconcileMetrics(): boolean {
    return this.reconcileTotal !== undefined;
  }

  setLeader(lease: string, leader: boolean): void {
    this.leaderStatus.set({ [LABEL.name]: lease }, leader ? 1 : 0);
  }

  apiRequest(method: string, code: string): void {
    const key = `${method} ${code}`;
    let labels = this.restLabels.get(key);
    if (labels === undefined) {
      labels = { [LABEL.code]: code, [LABEL.host]: API_HOST, [LABEL.method]: method };
      this.restLabels.set(key, labels);
    }
    this.restRequests.inc(labels, 1);
  }

  /**
   * Initializes one controller's series at zero, as controller-runtime does when a controller
   * starts, and returns its recorder; undefined in the component-base flavor.
   */
  controller(name: string, maxConcurrentReconciles: number): ReconcileMetrics | undefined {
    const total = this.reconcileTotal;
    const errors = this.reconcileErrors;
    const time = this.reconcileTime;
    const active = this.activeWorkers;
    if (total === undefined || errors === undefined || time === undefined || active === undefined) return undefined;
    const c = { [LABEL.controller]: name };
    const result = (value: string): Labels => ({ [LABEL.controller]: name, [LABEL.result]: value });
    const success = result(RECONCILE_RESULT.success);
    const error = result(RECONCILE_RESULT.error);
    const requeue = result(RECONCILE_RESULT.requeue);
    const requeueAfter = result(RECONCILE_RESULT.requeueAfter);
    for (const labels of [success, error, requeue, requeueAfter]) total.inc(labels, 0);
    errors.inc(c, 0);
    this.reconcilePanics?.inc(c, 0);
    time.zero(c);
    active.set(c, 0);
    this.maxConcurrent?.set(c, maxConcurrentReconciles);
    return {
      success: () => total.inc(success, 1),
      error: () => {
        total.inc(error, 1);
        errors.inc(c, 1);
      },
      requeue: () => total.inc(requeue, 1),
      requeueAfter: () => total.inc(requeueAfter, 1),
      observe: (seconds) => time.observe(c, seconds),
      workerStarted: () => active.inc(c, 1),
      workerFinished: () => active.dec(c, 1),
    };
  }
}
