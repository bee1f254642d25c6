/**
 * The sidecar, as the chart's README gives it: a strategic-merge patch adding the service's container to a
 * controller's Deployment, scraping the controller's metrics over loopback. The same container as
 * deploy/sidecar/plain/sidecar-patch.yaml (whose comments explain each setting); the deploy tests compare the two.
 * It changes nothing at the pod level, so the controller's own pod settings stay as they are.
 */
import { DEFAULT_LISTEN, DEFAULT_TARGET } from '../../config/service-defaults.js';
import { ARTIFACT_NAME } from '../defaults.js';
import { CONTAINER_SECURITY_CONTEXT, SERVICE_PORT, SIDECAR_RESOURCES, serviceProbes } from './container-settings.js';

/** The name of the sidecar's port: distinct from the controller's own port names. */
export const SIDECAR_PORT_NAME = 'wqd-http';

export function sidecarPatch(image: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'my-controller', namespace: 'my-controller-system' },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: ARTIFACT_NAME,
              image,
              args: ['serve', '--target', DEFAULT_TARGET, '--listen', DEFAULT_LISTEN],
              ports: [{ name: SIDECAR_PORT_NAME, containerPort: SERVICE_PORT, protocol: 'TCP' }],
              ...serviceProbes(SERVICE_PORT),
              resources: SIDECAR_RESOURCES,
              securityContext: CONTAINER_SECURITY_CONTEXT,
            },
          ],
        },
      },
    },
  };
}
