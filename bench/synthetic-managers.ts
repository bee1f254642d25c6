/**
 * Synthetic controller managers for the benchmarks: the series a controller-runtime manager exposes for its
 * controllers (work queues, reconciles, workers, REST client, leader election), with steady rates by kind
 * (healthy, backlog, hot loop, failing, slow), as a Prometheus text page at any time since the manager started.
 * Cheap to make in any number, unlike the simulator's queues; no diagnosis is calibrated on them.
 */
export type Kind = 'healthy' | 'backlog' | 'hot' | 'failing' | 'slow';
const KINDS: readonly Kind[] = [
  'healthy',
  'healthy',
  'healthy',
  'backlog',
  'healthy',
  'hot',
  'healthy',
  'failing',
  'healthy',
  'slow',
];
const BUCKETS = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

export type QueueProfile = { name: string; kind: Kind; rate: number; seconds: number };

export function profiles(target: number, count: number): QueueProfile[] {
  return Array.from({ length: count }, (_, i) => {
    const kind = KINDS[(target * count + i) % KINDS.length] as Kind;
    const rate = kind === 'hot' ? 150 : kind === 'backlog' ? 10 : 2 + (i % 5);
    const seconds = kind === 'slow' ? 20 : kind === 'backlog' ? 0.5 : 0.05;
    return { name: `ctl-${target}-${i}`, kind, rate, seconds };
  });
}

function histogram(lines: string[], name: string, labels: string, count: number, typical: number): void {
  for (const b of BUCKETS) {
    const fraction = b >= typical * 3 ? 1 : b >= typical ? 0.9 : b >= typical / 10 ? 0.3 : 0;
    lines.push(`${name}_bucket{${labels},le="${b}"} ${Math.floor(count * fraction)}`);
  }
  lines.push(`${name}_bucket{${labels},le="+Inf"} ${count}`);
  lines.push(`${name}_sum{${labels}} ${count * typical}`);
  lines.push(`${name}_count{${labels}} ${count}`);
}

/** The page of one synthetic manager `t` seconds after its start (Prometheus text). */
export function syntheticPage(queues: readonly QueueProfile[], t: number): string {
  if (queues.length === 0) return '# no work queues here\n';
  const lines: string[] = [];
  const family = (name: string, type: string) => lines.push(`# HELP ${name} synthetic`, `# TYPE ${name} ${type}`);
  const each = (fn: (q: QueueProfile, labels: string) => void) => {
    for (const q of queues) fn(q, `controller="${q.name}",name="${q.name}"`);
  };
  const adds = (q: QueueProfile) => Math.floor(q.rate * t);
  const done = (q: QueueProfile) => (q.kind === 'backlog' ? Math.floor(q.rate * 0.8 * t) : adds(q));
  const failed = (q: QueueProfile) => (q.kind === 'failing' ? Math.floor(adds(q) * 0.8) : 0);
  family('workqueue_depth', 'gauge');
  each((q, l) =>
    lines.push(`workqueue_depth{${l},priority=""} ${q.kind === 'backlog' ? Math.min(5000, 20 + 2 * t) : t % 3}`),
  );
  family('workqueue_adds_total', 'counter');
  each((q, l) => lines.push(`workqueue_adds_total{${l}} ${adds(q)}`));
  family('workqueue_retries_total', 'counter');
  each((q, l) => lines.push(`workqueue_retries_total{${l}} ${failed(q)}`));
  family('workqueue_longest_running_processor_seconds', 'gauge');
  each((q, l) => lines.push(`workqueue_longest_running_processor_seconds{${l}} ${q.kind === 'slow' ? 25 : 0.01}`));
  family('workqueue_unfinished_work_seconds', 'gauge');
  each((q, l) => lines.push(`workqueue_unfinished_work_seconds{${l}} ${q.kind === 'slow' ? 60 : 0.02}`));
  family('workqueue_queue_duration_seconds', 'histogram');
  each((q, l) => histogram(lines, 'workqueue_queue_duration_seconds', l, done(q), q.kind === 'backlog' ? 60 : 0.01));
  family('workqueue_work_duration_seconds', 'histogram');
  each((q, l) => histogram(lines, 'workqueue_work_duration_seconds', l, done(q), q.seconds));
  family('controller_runtime_reconcile_total', 'counter');
  for (const q of queues) {
    const c = `controller="${q.name}"`;
    lines.push(`controller_runtime_reconcile_total{${c},result="success"} ${done(q) - failed(q)}`);
    lines.push(`controller_runtime_reconcile_total{${c},result="error"} ${failed(q)}`);
    lines.push(`controller_runtime_reconcile_total{${c},result="requeue"} 0`);
    lines.push(`controller_runtime_reconcile_total{${c},result="requeue_after"} 0`);
  }
  family('controller_runtime_reconcile_errors_total', 'counter');
  for (const q of queues) lines.push(`controller_runtime_reconcile_errors_total{controller="${q.name}"} ${failed(q)}`);
  family('controller_runtime_reconcile_time_seconds', 'histogram');
  for (const q of queues) {
    histogram(lines, 'controller_runtime_reconcile_time_seconds', `controller="${q.name}"`, done(q), q.seconds);
  }
  family('controller_runtime_active_workers', 'gauge');
  for (const q of queues) {
    const busy = q.kind === 'backlog' || q.kind === 'slow' ? 4 : 1;
    lines.push(`controller_runtime_active_workers{controller="${q.name}"} ${busy}`);
  }
  family('controller_runtime_max_concurrent_reconciles', 'gauge');
  for (const q of queues) lines.push(`controller_runtime_max_concurrent_reconciles{controller="${q.name}"} 4`);
  const writes = queues.reduce((n, q) => n + (q.kind === 'hot' ? adds(q) : Math.floor(adds(q) * 0.1)), 0);
  family('rest_client_requests_total', 'counter');
  lines.push(`rest_client_requests_total{code="200",host="10.96.0.1:443",method="GET"} ${Math.floor(t * 5)}`);
  lines.push(`rest_client_requests_total{code="200",host="10.96.0.1:443",method="PUT"} ${writes}`);
  family('leader_election_master_status', 'gauge');
  lines.push('leader_election_master_status{name="manager"} 1');
  return `${lines.join('\n')}\n`;
}
