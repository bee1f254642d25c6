/**
 * A Kubernetes API server fake on 127.0.0.1 that speaks just enough of the pod list/watch protocol
 * for @kubernetes/client-node's ListWatch:
 *
 * - `GET /api/v1/namespaces/NS/pods` and `GET /api/v1/pods` (all namespaces), `labelSelector` with
 *   `k=v`, `k==v`, `k!=v`, `k` terms; answers a PodList with the current resourceVersion.
 * - the same with `watch=true&resourceVersion=RV`: replays the events after RV, then streams new
 *   ones as NDJSON, keeping the response open. An RV older than the compaction point gets an
 *   `ERROR` event with code 410 and the stream ends, as a real API server does.
 * - switches for failures: `forbidden` (403 Status on every request), `closeWatchesAtOnce`
 *   (every watch ends right after its headers), `endWatches()`, `sendGone()`.
 */
import type http from 'node:http';
import { type LocalServer, startHttpServer, startHttpsServer } from './local-server.js';

export interface FakePodSpec {
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  phase?: string;
  podIP?: string | undefined;
  containers?: Array<{ name: string; ports?: number[] }>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  watch: boolean;
  /** The status the fake answered with. */
  status: number;
}

type Pod = Record<string, unknown> & {
  metadata: { namespace: string; name: string; resourceVersion: string; [k: string]: unknown };
};

interface WatchEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  pod: Pod;
}

interface Watcher {
  namespace: string | null;
  selector: string | null;
  res: http.ServerResponse;
}

export class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  forbidden = false;
  closeWatchesAtOnce = false;
  private rv = 100;
  private compactedRv = 0;
  private readonly pods = new Map<string, Pod>();
  private readonly events: WatchEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private server!: LocalServer;

  static async start(tls?: { cert: Buffer; key: Buffer }): Promise<FakeKubeApi> {
    const api = new FakeKubeApi();
    const handler: http.RequestListener = (req, res) => api.handle(req, res);
    api.server = tls ? await startHttpsServer(tls, handler) : await startHttpServer(handler);
    return api;
  }

  get origin(): string {
    return this.server.origin;
  }
  get port(): number {
    return this.server.port;
  }
  get resourceVersion(): string {
    return String(this.rv);
  }
  /** Open watch streams. */
  get openWatches(): number {
    return this.watchers.size;
  }
  lists(): RecordedRequest[] {
    return this.requests.filter((r) => !r.watch);
  }
  watches(): RecordedRequest[] {
    return this.requests.filter((r) => r.watch);
  }

  /** Creates or replaces a pod and tells the watchers (ADDED or MODIFIED). */
  put(spec: FakePodSpec): void {
    const key = `${spec.namespace}/${spec.name}`;
    const type = this.pods.has(key) ? 'MODIFIED' : 'ADDED';
    const pod = this.makePod(spec, ++this.rv);
    this.pods.set(key, pod);
    this.publish({ rv: this.rv, type, pod });
  }

  /** Deletes a pod and tells the watchers. */
  remove(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    const pod = { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.rv) } };
    this.publish({ rv: this.rv, type: 'DELETED', pod });
  }

  /** Changes state without any watch event and forgets the history: only a re-list can see it. */
  changeSilently(change: () => void): void {
    const watchers = [...this.watchers];
    this.watchers.clear();
    change();
    this.watchers.clear();
    for (const w of watchers) this.watchers.add(w);
    this.compactedRv = this.rv;
    this.events.length = 0;
  }

  /** Ends every open watch stream normally. */
  endWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** Sends `ERROR 410 Gone` on every open watch and ends it. */
  sendGone(): void {
    for (const w of this.watchers) {
      w.res.end(`${JSON.stringify(goneEvent(this.compactedRv))}\n`);
    }
    this.watchers.clear();
  }

  async close(): Promise<void> {
    this.endWatches();
    await this.server.close();
  }

  private makePod(spec: FakePodSpec, rv: number): Pod {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        namespace: spec.namespace,
        name: spec.name,
        uid: `uid-${spec.namespace}-${spec.name}`,
        resourceVersion: String(rv),
        labels: spec.labels ?? {},
        annotations: spec.annotations ?? {},
      },
      spec: {
        containers: (spec.containers ?? [{ name: 'manager' }]).map((c) => ({
          name: c.name,
          image: 'example/controller:1',
          ...(c.ports ? { ports: c.ports.map((p) => ({ containerPort: p, protocol: 'TCP' })) } : {}),
        })),
      },
      status: {
        phase: spec.phase ?? 'Running',
        ...(spec.podIP !== undefined ? { podIP: spec.podIP } : {}),
      },
    };
  }

  private publish(event: WatchEvent): void {
    this.events.push(event);
    for (const w of this.watchers) {
      if (matches(event.pod, w.namespace, w.selector)) w.res.write(`${JSON.stringify(watchLine(event))}\n`);
    }
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const watch = url.searchParams.get('watch') === 'true';
    const record = (status: number): void => {
      this.requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        authorization: req.headers.authorization,
        watch,
        status,
      });
    };
    const m = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?pods$/.exec(url.pathname);
    if (req.method !== 'GET' || !m) {
      record(404);
      sendStatus(res, 404, 'NotFound', `the server could not find the requested resource ${url.pathname}`);
      return;
    }
    const namespace = m[1] ? decodeURIComponent(m[1]) : null;
    const selector = url.searchParams.get('labelSelector');
    if (this.forbidden) {
      record(403);
      const where = namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope';
      sendStatus(
        res,
        403,
        'Forbidden',
        `pods is forbidden: User "system:serviceaccount:mon:workqueue-doctor" cannot ${watch ? 'watch' : 'list'} resource "pods" in API group ""${where}`,
      );
      return;
    }
    record(200);
    if (!watch) {
      const items = [...this.pods.values()].filter((p) => matches(p, namespace, selector));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) }, items }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    if (this.closeWatchesAtOnce) {
      res.end();
      return;
    }
    const from = Number(url.searchParams.get('resourceVersion') ?? '0');
    if (from < this.compactedRv) {
      res.end(`${JSON.stringify(goneEvent(this.compactedRv))}\n`);
      return;
    }
    for (const e of this.events) {
      if (e.rv > from && matches(e.pod, namespace, selector)) res.write(`${JSON.stringify(watchLine(e))}\n`);
    }
    const watcher: Watcher = { namespace, selector, res };
    this.watchers.add(watcher);
    res.on('close', () => this.watchers.delete(watcher));
  }
}

function watchLine(e: WatchEvent): unknown {
  return { type: e.type, object: e.pod };
}

function goneEvent(rv: number): unknown {
  return {
    type: 'ERROR',
    object: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `too old resource version (current ${rv})`,
      reason: 'Expired',
      code: 410,
    },
  };
}

function sendStatus(res: http.ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code }));
}

function matches(pod: Pod, namespace: string | null, selector: string | null): boolean {
  if (namespace !== null && pod.metadata.namespace !== namespace) return false;
  if (!selector) return true;
  const labels = ((pod.metadata as { labels?: Record<string, string> }).labels ?? {}) as Record<string, string>;
  return selector.split(',').every((term) => {
    const t = term.trim();
    if (t === '') return true;
    const ne = /^([^!=]+)!=(.*)$/.exec(t);
    if (ne) return labels[ne[1]!.trim()] !== ne[2]!.trim();
    const eq = /^([^!=]+)==?(.*)$/.exec(t);
    if (eq) return labels[eq[1]!.trim()] === eq[2]!.trim();
    return t in labels;
  });
}
