/**
 * Where pod discovery connects to: the Kubernetes API as the pod's service account sees it, as a
 * kubeconfig file describes it, or an explicit server; loaded into the client library's `KubeConfig`.
 *
 * Contract: `loadKubeConfig` throws an `Error` naming the problem when the connection cannot be used
 * (not in a pod, unreadable kubeconfig, unknown context, no current cluster, a plain-http server
 * without `skipTLSVerify`, which the client library requires); it contacts no server.
 */
import type * as K8s from '@kubernetes/client-node';
import { errorText } from './kube-api-errors.js';

export type KubeConnection =
  /** The pod's service account: `KUBERNETES_SERVICE_HOST`/`_PORT` and the mounted token and CA. */
  | { kind: 'in-cluster' /** prefix of `/var/run/secrets/...` (tests) */; pathPrefix?: string }
  /** A kubeconfig file (`$KUBECONFIG` or `~/.kube/config` when `path` is omitted). */
  | { kind: 'kubeconfig'; path?: string; context?: string }
  /** An explicit API server. An `http://` server needs `skipTLSVerify: true` (client-library rule). */
  | {
      kind: 'server';
      server: string;
      token?: string;
      /** Re-read by the client library when it changes. */
      tokenFile?: string;
      caFile?: string;
      skipTLSVerify?: boolean;
    };

/** The client library, loaded lazily by discovery. */
export type K8sModule = typeof import('@kubernetes/client-node');

/** The client library's configuration for `conn` (see the module contract). */
export function loadKubeConfig(k8s: K8sModule, conn: KubeConnection): K8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  switch (conn.kind) {
    case 'in-cluster': {
      if (!process.env['KUBERNETES_SERVICE_HOST'] || !process.env['KUBERNETES_SERVICE_PORT']) {
        throw new Error('not running in a Kubernetes pod: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT are not set');
      }
      kc.loadFromCluster(conn.pathPrefix ?? '');
      break;
    }
    case 'kubeconfig': {
      try {
        if (conn.path !== undefined) kc.loadFromFile(conn.path);
        else kc.loadFromDefault();
      } catch (err) {
        throw new Error(`cannot load kubeconfig ${conn.path ?? '(default)'}: ${errorText(err)}`, { cause: err });
      }
      if (conn.context !== undefined) {
        if (!kc.getContextObject(conn.context)) {
          throw new Error(`kubeconfig ${conn.path ?? '(default)'} has no context ${JSON.stringify(conn.context)}`);
        }
        kc.setCurrentContext(conn.context);
      }
      break;
    }
    case 'server': {
      kc.loadFromOptions({
        clusters: [
          {
            name: 'cluster',
            server: conn.server,
            skipTLSVerify: conn.skipTLSVerify ?? false,
            ...(conn.caFile !== undefined ? { caFile: conn.caFile } : {}),
          },
        ],
        users: [
          conn.tokenFile !== undefined
            ? { name: 'user', authProvider: { name: 'tokenFile', config: { tokenFile: conn.tokenFile } } }
            : conn.token !== undefined
              ? { name: 'user', token: conn.token }
              : { name: 'user' },
        ],
        contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
        currentContext: 'context',
      });
      break;
    }
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the Kubernetes configuration names no current cluster');
  if (cluster.server.startsWith('http://') && !cluster.skipTLSVerify) {
    throw new Error(`API server ${cluster.server} is plain http: the client library requires skipTLSVerify for it`);
  }
  return kc;
}
