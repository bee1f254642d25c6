/**
 * Generated /metrics pages shaped like a large controller manager, as the Go client prints them
 * (families grouped, labels sorted with `le` last, Go number formatting): many work queues with
 * both label schemas (controller-runtime: `controller` + `name`, 12 decade buckets;
 * component-base: `name`, 10 buckets), controller-runtime reconcile metrics, the REST client and
 * Go runtime/process metrics. Deterministic for a given line count.
 */
import { formatGoFloat } from '../src/exposition/float-text.js';
import { CLIENT_GO, CONTROLLER_RUNTIME, LABEL, RECONCILE_RESULT, SUFFIX, WORKQUEUE } from '../src/metrics/names.js';
import { WORKQUEUE_BUCKETS, WORKQUEUE_HELP } from '../src/queue/index.js';
import { RECONCILE_TIME_BUCKETS } from '../src/simulate/process-metrics.js';

const CR_BUCKETS = WORKQUEUE_BUCKETS['controller-runtime'];
const CB_BUCKETS = WORKQUEUE_BUCKETS['component-base'];
const RECONCILE_BUCKETS = RECONCILE_TIME_BUCKETS;
const REST_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

interface Queue {
  name: string;
  controller: string | undefined;
}

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lines a queue contributes (work-queue families, plus reconcile metrics for controller-runtime). */
function queueLines(q: Queue): number {
  const buckets = q.controller !== undefined ? CR_BUCKETS.length : CB_BUCKETS.length;
  const wq = 5 + 2 * (buckets + 3);
  return q.controller !== undefined ? wq + 4 + 4 + RECONCILE_BUCKETS.length + 3 : wq;
}

export interface GeneratedPage {
  readonly text: string;
  readonly lines: number;
  readonly samples: number;
  readonly bytes: number;
  readonly queues: number;
}

/** A page of at least `targetLines` lines (and less than one queue more). */
export function controllerManagerPage(targetLines: number, seed = 1): GeneratedPage {
  const queues: Queue[] = [];
  let lines = FIXED_LINES;
  for (let i = 0; lines < targetLines; i++) {
    const q: Queue =
      i % 2 === 0
        ? { name: `kind${i}`, controller: `kind${i}` }
        : { name: `component_queue_${i}`, controller: undefined };
    queues.push(q);
    lines += queueLines(q);
  }
  return render(queues, seed);
}

/** A page with exactly `count` work queues (alternating controller-runtime and component-base). */
export function pageWithQueues(count: number, seed = 1): GeneratedPage {
  const queues: Queue[] = [];
  for (let i = 0; i < count; i++) {
    queues.push(
      i % 2 === 0
        ? { name: `kind${i}`, controller: `kind${i}` }
        : { name: `component_queue_${i}`, controller: undefined },
    );
  }
  return render(queues, seed);
}

const HOSTS = ['10.96.0.1:443', 'kubernetes.default.svc:443'];
const METHODS = ['GET', 'LIST', 'WATCH', 'PUT', 'PATCH', 'POST', 'DELETE'];
const CODES = ['200', '201', '404', '409', '500'];
/** Lines that do not depend on the number of queues: metadata, Go runtime, REST client. */
const FIXED_LINES =
  2 * 6 + // controller-runtime families
  2 +
  7 +
  2 +
  40 * 3 +
  3 + // Go runtime and process
  2 +
  HOSTS.length * METHODS.length * CODES.length +
  2 +
  HOSTS.length * METHODS.length * (REST_BUCKETS.length + 3) +
  3 + // leader election
  2 * 7; // work-queue families

function render(queues: readonly Queue[], seed: number): GeneratedPage {
  const r = rng(seed);
  const hosts = HOSTS;
  const methods = METHODS;
  const codes = CODES;

  const out: string[] = [];
  let samples = 0;
  const family = (name: string, type: string, help: string): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  };
  const sample = (name: string, labels: string, value: number): void => {
    out.push(labels === '' ? `${name} ${formatGoFloat(value)}` : `${name}{${labels}} ${formatGoFloat(value)}`);
    samples++;
  };
  const qLabels = (q: Queue): string =>
    q.controller !== undefined
      ? `${LABEL.controller}="${q.controller}",${LABEL.name}="${q.name}"`
      : `${LABEL.name}="${q.name}"`;
  const histogram = (name: string, base: string, bounds: readonly number[], total: number): void => {
    let acc = 0;
    const sep = base === '' ? '' : ',';
    for (const b of bounds) {
      acc += Math.floor(r() * (total - acc) * 0.6);
      sample(`${name}${SUFFIX.bucket}`, `${base}${sep}${LABEL.le}="${formatGoFloat(b)}"`, acc);
    }
    sample(`${name}${SUFFIX.bucket}`, `${base}${sep}${LABEL.le}="+Inf"`, total);
    sample(`${name}${SUFFIX.sum}`, base, total * r() * 0.01);
    sample(`${name}${SUFFIX.count}`, base, total);
  };

  // controller-runtime reconcile metrics.
  const crQueues = queues.filter((q) => q.controller !== undefined);
  family(CONTROLLER_RUNTIME.activeWorkers, 'gauge', 'Number of currently used workers per controller');
  for (const q of crQueues)
    sample(CONTROLLER_RUNTIME.activeWorkers, `controller="${q.controller}"`, Math.floor(r() * 4));
  family(CONTROLLER_RUNTIME.maxConcurrentReconciles, 'gauge', 'Maximum number of concurrent reconciles per controller');
  for (const q of crQueues) sample(CONTROLLER_RUNTIME.maxConcurrentReconciles, `controller="${q.controller}"`, 4);
  family(CONTROLLER_RUNTIME.reconcileErrors, 'counter', 'Total number of reconciliation errors per controller');
  for (const q of crQueues)
    sample(CONTROLLER_RUNTIME.reconcileErrors, `controller="${q.controller}"`, Math.floor(r() * 100));
  family(CONTROLLER_RUNTIME.reconcilePanics, 'counter', 'Total number of reconciliation panics per controller');
  for (const q of crQueues) sample(CONTROLLER_RUNTIME.reconcilePanics, `controller="${q.controller}"`, 0);
  family(CONTROLLER_RUNTIME.reconcileTime, 'histogram', 'Length of time per reconciliation per controller');
  for (const q of crQueues)
    histogram(CONTROLLER_RUNTIME.reconcileTime, `controller="${q.controller}"`, RECONCILE_BUCKETS, 100000);
  family(CONTROLLER_RUNTIME.reconcileTotal, 'counter', 'Total number of reconciliations per controller');
  for (const q of crQueues) {
    for (const result of Object.values(RECONCILE_RESULT)) {
      sample(
        CONTROLLER_RUNTIME.reconcileTotal,
        `controller="${q.controller}",result="${result}"`,
        Math.floor(r() * 1e5),
      );
    }
  }

  // Go runtime and process.
  family('go_gc_duration_seconds', 'summary', 'A summary of the pause duration of garbage collection cycles.');
  for (const q of ['0', '0.25', '0.5', '0.75', '1']) sample('go_gc_duration_seconds', `quantile="${q}"`, r() * 1e-3);
  sample('go_gc_duration_seconds_sum', '', 1.25);
  sample('go_gc_duration_seconds_count', '', 1234);
  family('go_goroutines', 'gauge', 'Number of goroutines that currently exist.');
  sample('go_goroutines', '', 412);
  for (let i = 0; i < 40; i++) {
    family(`go_memstats_stat_${i}_bytes`, 'gauge', 'Number of bytes of some memory statistic.');
    sample(`go_memstats_stat_${i}_bytes`, '', Math.floor(r() * 1e9));
  }
  family('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.');
  sample('process_cpu_seconds_total', '', 12345.67);

  // REST client.
  family(
    CLIENT_GO.restClientRequests,
    'counter',
    'Number of HTTP requests, partitioned by status code, method, and host.',
  );
  for (const host of hosts) {
    for (const method of methods) {
      for (const code of codes)
        sample(CLIENT_GO.restClientRequests, `code="${code}",host="${host}",method="${method}"`, Math.floor(r() * 1e6));
    }
  }
  family(
    'rest_client_request_duration_seconds',
    'histogram',
    'Request latency in seconds. Broken down by verb, and host.',
  );
  for (const host of hosts) {
    for (const method of methods)
      histogram('rest_client_request_duration_seconds', `host="${host}",verb="${method}"`, REST_BUCKETS, 50000);
  }
  family(
    CLIENT_GO.leaderElectionMasterStatus,
    'gauge',
    'Gauge of if the reporting system is master of the relevant lease.',
  );
  sample(CLIENT_GO.leaderElectionMasterStatus, 'name="kube-controller-manager"', 1);

  // Work queues, both schemas.
  family(WORKQUEUE.adds, 'counter', WORKQUEUE_HELP['controller-runtime'].adds);
  for (const q of queues) sample(WORKQUEUE.adds, qLabels(q), Math.floor(r() * 1e7));
  family(WORKQUEUE.depth, 'gauge', WORKQUEUE_HELP['controller-runtime'].depth);
  for (const q of queues) sample(WORKQUEUE.depth, qLabels(q), Math.floor(r() * 50));
  family(WORKQUEUE.longestRunningProcessor, 'gauge', WORKQUEUE_HELP['controller-runtime'].longestRunningProcessor);
  for (const q of queues) sample(WORKQUEUE.longestRunningProcessor, qLabels(q), r() * 1e-3);
  family(WORKQUEUE.queueDuration, 'histogram', WORKQUEUE_HELP['controller-runtime'].queueDuration);
  for (const q of queues)
    histogram(WORKQUEUE.queueDuration, qLabels(q), q.controller !== undefined ? CR_BUCKETS : CB_BUCKETS, 1e6);
  family(WORKQUEUE.retries, 'counter', WORKQUEUE_HELP['controller-runtime'].retries);
  for (const q of queues) sample(WORKQUEUE.retries, qLabels(q), Math.floor(r() * 1e4));
  family(WORKQUEUE.unfinishedWork, 'gauge', WORKQUEUE_HELP['controller-runtime'].unfinishedWork);
  for (const q of queues) sample(WORKQUEUE.unfinishedWork, qLabels(q), r() * 1e-3);
  family(WORKQUEUE.workDuration, 'histogram', WORKQUEUE_HELP['controller-runtime'].workDuration);
  for (const q of queues)
    histogram(WORKQUEUE.workDuration, qLabels(q), q.controller !== undefined ? CR_BUCKETS : CB_BUCKETS, 1e6);

  const text = `${out.join('\n')}\n`;
  return { text, lines: out.length, samples, bytes: Buffer.byteLength(text), queues: queues.length };
}
