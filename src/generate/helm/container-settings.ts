/**
 * How the service's container runs in Kubernetes, as the kustomize manifests under deploy/ run it: the chart's
 * defaults and the sidecar patch of its README. The deploy tests compare these with the kustomize renders.
 *
 * - Locked down: uid and gid 65532 (the image's USER), non-root, a read-only root filesystem, no privilege
 *   escalation, every capability dropped, the runtime's default seccomp profile; it meets the `restricted` Pod
 *   Security profile.
 * - Probed: liveness on /healthz (the process answers), readiness on /readyz (a first evaluation has finished).
 * - Sized by its memory limit, which is the service's budget (it reads it from its cgroup); no CPU limit, which
 *   would only throttle the short bursts of scraping and evaluating.
 */
import { DEFAULT_LISTEN } from '../../config/service-defaults.js';
import { parseListenAddress } from '../../config/setting-values.js';

/** The port the service listens on in its container (`listen`'s default). */
export const SERVICE_PORT = parseListenAddress(DEFAULT_LISTEN, 'default').port;
/** The image's USER. */
const RUN_AS = 65532;

export const POD_SECURITY_CONTEXT = {
  runAsNonRoot: true,
  runAsUser: RUN_AS,
  runAsGroup: RUN_AS,
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

/** Set on the container itself too: a sidecar cannot rely on the pod's settings, which stay the controller's. */
export const CONTAINER_SECURITY_CONTEXT = {
  runAsNonRoot: true,
  runAsUser: RUN_AS,
  runAsGroup: RUN_AS,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
} as const;

/** The liveness and readiness probes on a port (its number or its name in the container). */
export function serviceProbes(port: number | string): { livenessProbe: object; readinessProbe: object } {
  return {
    livenessProbe: {
      httpGet: { path: '/healthz', port },
      initialDelaySeconds: 5,
      periodSeconds: 10,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    readinessProbe: { httpGet: { path: '/readyz', port }, periodSeconds: 5, timeoutSeconds: 2, failureThreshold: 3 },
  };
}

/** The service on its own, watching many controllers (docs/deployment.md, Resources: the budget at 384Mi). */
export const SERVICE_RESOURCES = { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '384Mi' } } as const;

/** The sidecar, watching its one controller (docs/deployment.md, Resources: the budget at 192Mi). */
export const SIDECAR_RESOURCES = { requests: { cpu: '20m', memory: '96Mi' }, limits: { memory: '192Mi' } } as const;
