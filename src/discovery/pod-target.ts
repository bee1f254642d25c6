/**
 * Maps one Kubernetes pod to its scrape target (or to none). Pure; no client library at runtime.
 *
 * Rules:
 * - Only pods in phase `Running` with a pod IP become targets; `prometheus.io/scrape: "false"`
 *   opts a pod out.
 * - Port, path and scheme come from the `prometheus.io/port`, `prometheus.io/path` and
 *   `prometheus.io/scheme` annotations, else from the configured defaults (path `/metrics`,
 *   scheme `http`). A pod with neither a port annotation nor a default port is not a target.
 * - Labels: `namespace`, `pod`, `container` (the container declaring that port, when one does),
 *   `job` (configured, else the pod's `app.kubernetes.io/name` label, else its `app` label, else
 *   `kubernetes-pods`) and `instance` (`ip:port`).
 * - The key is `pod/<namespace>/<name>:<port>`: stable across IP changes of the same pod.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { LABEL } from '../metrics/names.js';
import type { Target } from './target.js';

export const ANNOTATION = {
  scrape: 'prometheus.io/scrape',
  port: 'prometheus.io/port',
  path: 'prometheus.io/path',
  scheme: 'prometheus.io/scheme',
} as const;

export const APP_NAME_LABEL = 'app.kubernetes.io/name';
export const DEFAULT_POD_JOB = 'kubernetes-pods';

export interface PodTargetDefaults {
  /** Port when the pod has no `prometheus.io/port` annotation. */
  port?: number;
  /** Path when the pod has no `prometheus.io/path` annotation (default `/metrics`). */
  path?: string;
  /** Scheme when the pod has no `prometheus.io/scheme` annotation (default `http`). */
  scheme?: 'http' | 'https';
  /** The `job` label for every pod target (default: from the pod's labels). */
  job?: string;
}

export function podTarget(pod: V1Pod, defaults: PodTargetDefaults = {}): Target | null {
  const meta = pod.metadata;
  const namespace = meta?.namespace ?? '';
  const name = meta?.name;
  const ip = pod.status?.podIP;
  if (!name || !ip || pod.status?.phase !== 'Running') return null;
  const annotations = meta?.annotations ?? {};
  if (annotations[ANNOTATION.scrape]?.trim().toLowerCase() === 'false') return null;

  const port = parsePort(annotations[ANNOTATION.port]) ?? defaults.port;
  if (port === undefined) return null;
  let path = annotations[ANNOTATION.path]?.trim() || defaults.path || '/metrics';
  if (!path.startsWith('/')) path = `/${path}`;
  const schemeAnnotation = annotations[ANNOTATION.scheme]?.trim().toLowerCase();
  const scheme =
    schemeAnnotation === 'http' || schemeAnnotation === 'https' ? schemeAnnotation : (defaults.scheme ?? 'http');

  const host = ip.includes(':') ? `[${ip}]` : ip;
  const podLabels = meta?.labels ?? {};
  const job = defaults.job ?? podLabels[APP_NAME_LABEL] ?? podLabels['app'] ?? DEFAULT_POD_JOB;
  const labels: Record<string, string> = {
    [LABEL.namespace]: namespace,
    [LABEL.pod]: name,
    [LABEL.job]: job,
    [LABEL.instance]: `${host}:${port}`,
  };
  const container = pod.spec?.containers?.find((c) => c.ports?.some((p) => p.containerPort === port));
  if (container) labels[LABEL.container] = container.name;
  return { key: `pod/${namespace}/${name}:${port}`, url: `${scheme}://${host}:${port}${path}`, labels };
}

function parsePort(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (!/^\d{1,5}$/.test(s)) return undefined;
  const n = Number(s);
  return n >= 1 && n <= 65535 ? n : undefined;
}
