/**
 * Kubernetes pod discovery: list + watch of pods (one or more namespaces, or all), each Running pod
 * with an IP mapped to a scrape target by `podTarget`.
 *
 * Contract:
 * - `start()` loads `@kubernetes/client-node` (lazily: other modes never pay for it) and the
 *   connection config, then makes a first list+watch attempt per namespace. It rejects only on a
 *   configuration problem (no in-cluster environment, unreadable kubeconfig); an unreachable or
 *   refusing API server is reported through `status()` and retried, and `start()` still resolves.
 * - Targets follow pod churn: added, changed (IP, phase, annotations) and deleted pods update
 *   `targets()` and fire `'change'` with the new list (only when the target set really changed).
 * - When the API is unavailable or a watch fails, the last known targets stay; the status turns
 *   unhealthy with the error, `'status'` fires, and the namespace is re-listed and re-watched after an
 *   exponential backoff (with jitter). A watch that simply ends is resumed from the last resource
 *   version; an `ERROR 410 Gone` forces a re-list (both by the client library). A watch that ends
 *   at once several times in a row is treated as a failure, so a misbehaving proxy cannot cause a
 *   tight reconnect loop.
 * - `healthy` means: every namespace has been listed and its watch is connected, with no failure
 *   since. `lastSyncAt` is the last time discovery was known to be in sync (a list, a watch
 *   connected, or an event received), epoch milliseconds.
 * - `stop()` ends all watches and timers; no callback fires afterwards. A stopped discovery is not
 *   restarted by `start()`; create a new one.
 */
import type * as K8s from '@kubernetes/client-node';
import { type DiscoveryError, describeError } from './kube-api-errors.js';
import { type K8sModule, type KubeConnection, loadKubeConfig } from './kube-connection.js';
import { type PodTargetDefaults, podTarget } from './pod-target.js';
import { sameTarget, sortTargets, type Target } from './target.js';

export type { DiscoveryError, KubeConnection };

export interface PodDiscoveryOptions {
  connection: KubeConnection;
  /** Namespaces to watch; empty or omitted: all namespaces (one cluster-wide watch). */
  namespaces?: readonly string[];
  /** A Kubernetes label selector, e.g. `app.kubernetes.io/part-of=my-operator`. */
  labelSelector?: string;
  /** Port, path, scheme and job when the pod's annotations do not say. */
  defaults?: PodTargetDefaults;
  /** Retry delays after a failure: `initialMs` doubling up to `maxMs` (defaults 1 s and 60 s). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Bound on one list request (default 60 s). */
  listTimeoutMs?: number;
  /** Clock for status timestamps (epoch ms). */
  now?: () => number;
}

export interface ScopeStatus {
  healthy: boolean;
  lastError: DiscoveryError | null;
  lastSyncAt: number | null;
}

export interface DiscoveryStatus extends ScopeStatus {
  /** Failures since the last time every namespace was healthy. */
  consecutiveFailures: number;
  /** Per watched namespace (`''` for all namespaces). */
  namespaces: Record<string, ScopeStatus>;
}

export interface PodDiscovery {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Current targets, sorted by key. */
  targets(): Target[];
  status(): DiscoveryStatus;
  /** Fires with the new target list whenever it changes. Returns an unsubscribe function. */
  on(event: 'change', cb: (targets: Target[]) => void): () => void;
  /** Fires whenever the status changes (failure, recovery, sync). Returns an unsubscribe function. */
  on(event: 'status', cb: (status: DiscoveryStatus) => void): () => void;
}

/** A watch that ends this many times in a row, each within `SHORT_WATCH_MS` and without events, counts as failed. */
const SHORT_WATCH_LIMIT = 5;
const SHORT_WATCH_MS = 1_000;
/** A watch that stayed up this long resets the backoff. */
const STABLE_WATCH_MS = 10_000;

export function createPodDiscovery(options: PodDiscoveryOptions): PodDiscovery {
  const now = options.now ?? Date.now;
  const initialBackoff = options.backoff?.initialMs ?? 1_000;
  const maxBackoff = Math.max(initialBackoff, options.backoff?.maxMs ?? 60_000);
  const listTimeoutMs = options.listTimeoutMs ?? 60_000;
  const namespaces = [...new Set(options.namespaces ?? [])].filter((n) => n !== '');
  const scopeNames = namespaces.length > 0 ? namespaces : [''];

  const changeListeners = new Set<(targets: Target[]) => void>();
  const statusListeners = new Set<(status: DiscoveryStatus) => void>();
  let started: Promise<void> | undefined;
  let stopped = false;
  let consecutiveFailures = 0;
  let cachedTargets: Target[] = [];
  const scopes: Scope[] = [];

  const emit = <T>(listeners: Set<(v: T) => void>, value: T): void => {
    for (const cb of [...listeners]) {
      try {
        cb(value);
      } catch {
        // a listener's failure must not break discovery
      }
    }
  };

  const targetsChanged = (): void => {
    const all: Target[] = [];
    for (const s of scopes) all.push(...s.targets.values());
    cachedTargets = sortTargets(all);
    if (!stopped) emit(changeListeners, cachedTargets);
  };

  const status = (): DiscoveryStatus => {
    const perScope: Record<string, ScopeStatus> = {};
    let lastError: DiscoveryError | null = null;
    let lastSyncAt: number | null = null;
    let healthy = scopes.length > 0;
    for (const s of scopes) {
      perScope[s.namespace] = { healthy: s.healthy, lastError: s.lastError, lastSyncAt: s.lastSyncAt };
      healthy &&= s.healthy;
      if (s.lastError && (!lastError || s.lastError.at >= lastError.at)) lastError = s.lastError;
      if (s.lastSyncAt !== null) lastSyncAt = lastSyncAt === null ? s.lastSyncAt : Math.min(lastSyncAt, s.lastSyncAt);
    }
    return { healthy, lastError, lastSyncAt, consecutiveFailures, namespaces: perScope };
  };

  const statusChanged = (): void => {
    if (scopes.every((s) => s.healthy)) consecutiveFailures = 0;
    if (!stopped) emit(statusListeners, status());
  };

  interface Scope {
    namespace: string;
    targets: Map<string, Target>;
    healthy: boolean;
    lastError: DiscoveryError | null;
    lastSyncAt: number | null;
    /** Bumped for every new ListWatch; callbacks of older ones are ignored. */
    generation: number;
    listWatch: K8s.ListWatch<K8s.V1Pod> | undefined;
    attempt: number;
    retryTimer: NodeJS.Timeout | undefined;
    stableTimer: NodeJS.Timeout | undefined;
    watches: Set<AbortController>;
  }

  const podKey = (pod: K8s.V1Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

  const applyPod = (scope: Scope, pod: K8s.V1Pod, deleted: boolean): void => {
    const key = podKey(pod);
    const next = deleted ? null : podTarget(pod, options.defaults);
    const prev = scope.targets.get(key);
    if (next === null) {
      if (prev === undefined) return;
      scope.targets.delete(key);
    } else {
      if (prev !== undefined && sameTarget(prev, next)) return;
      scope.targets.set(key, next);
    }
    targetsChanged();
  };

  const replacePods = (scope: Scope, pods: readonly K8s.V1Pod[]): void => {
    const next = new Map<string, Target>();
    for (const pod of pods) {
      const t = podTarget(pod, options.defaults);
      if (t) next.set(podKey(pod), t);
    }
    const same =
      next.size === scope.targets.size &&
      [...next].every(([k, t]) => {
        const prev = scope.targets.get(k);
        return prev !== undefined && sameTarget(prev, t);
      });
    scope.targets = next;
    if (!same) targetsChanged();
  };

  const markSynced = (scope: Scope, healthy: boolean): void => {
    const wasHealthy = scope.healthy;
    scope.lastSyncAt = now();
    if (healthy) scope.healthy = true;
    if (!wasHealthy && scope.healthy) statusChanged();
  };

  const clearTimers = (scope: Scope): void => {
    if (scope.retryTimer) clearTimeout(scope.retryTimer);
    if (scope.stableTimer) clearTimeout(scope.stableTimer);
    scope.retryTimer = undefined;
    scope.stableTimer = undefined;
  };

  const retire = (scope: Scope): void => {
    scope.generation++;
    const lw = scope.listWatch;
    scope.listWatch = undefined;
    if (lw) void lw.stop();
    for (const ctrl of scope.watches) ctrl.abort();
    scope.watches.clear();
  };

  const fail = (scope: Scope, err: unknown, what: string): void => {
    if (stopped) return;
    retire(scope);
    clearTimers(scope);
    scope.healthy = false;
    scope.lastError = describeError(err, what, now());
    consecutiveFailures++;
    const base = Math.min(maxBackoff, initialBackoff * 2 ** Math.min(scope.attempt, 30));
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    scope.attempt++;
    scope.retryTimer = setTimeout(() => {
      scope.retryTimer = undefined;
      void connect(scope);
    }, delay);
    scope.retryTimer.unref();
    statusChanged();
  };

  let k8s: K8sModule | undefined;
  let kubeConfig: K8s.KubeConfig | undefined;
  let core: K8s.CoreV1Api | undefined;

  const connect = (scope: Scope): Promise<void> => {
    if (stopped || !k8s || !kubeConfig || !core) return Promise.resolve();
    retire(scope);
    const gen = scope.generation;
    const current = (): boolean => !stopped && scope.generation === gen;
    const where = scope.namespace === '' ? 'in all namespaces' : `in namespace ${scope.namespace}`;
    const api = core;
    let phase: 'list' | 'watch' = 'list';

    const listFn = async (): Promise<K8s.V1PodList> => {
      phase = 'list';
      const request =
        scope.namespace === ''
          ? api.listPodForAllNamespaces(
              options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {},
            )
          : api.listNamespacedPod({
              namespace: scope.namespace,
              ...(options.labelSelector !== undefined ? { labelSelector: options.labelSelector } : {}),
            });
      const list = await withTimeout(request, listTimeoutMs, `list timed out after ${listTimeoutMs} ms`);
      if (current()) {
        replacePods(scope, list.items);
        markSynced(scope, false);
      }
      phase = 'watch';
      return list;
    };

    // Wraps the library's Watch: tracks connections so stop() can end them, notices a connected
    // watch (the library has no event for it), and turns a run of instantly-ending watches into a failure.
    let shortWatches = 0;
    const baseWatch = new k8s.Watch(kubeConfig);
    const guardedWatch = Object.create(baseWatch) as K8s.Watch;
    guardedWatch.watch = async (path, params, callback, done) => {
      if (!current()) {
        const idle = new AbortController();
        idle.abort();
        return idle;
      }
      const startedAt = Date.now();
      let failed = false;
      let sawEvent = false;
      let ctrl: AbortController | undefined;
      ctrl = await baseWatch.watch(
        path,
        params,
        (type, obj, raw) => {
          sawEvent = true;
          if (current() && type !== 'ERROR') {
            scope.attempt = 0;
            shortWatches = 0;
            markSynced(scope, false);
          }
          callback(type, obj, raw);
        },
        (err) => {
          if (ctrl) scope.watches.delete(ctrl);
          if (err) {
            failed = true;
            done(err);
            return;
          }
          if (!sawEvent && Date.now() - startedAt < SHORT_WATCH_MS) shortWatches++;
          else shortWatches = 0;
          if (shortWatches >= SHORT_WATCH_LIMIT) {
            shortWatches = 0;
            done(new Error(`the watch ended at once ${SHORT_WATCH_LIMIT} times in a row`));
            return;
          }
          done(null);
        },
      );
      if (!current()) {
        ctrl.abort();
        return ctrl;
      }
      if (!failed) {
        scope.watches.add(ctrl);
        markSynced(scope, true);
        if (scope.stableTimer) clearTimeout(scope.stableTimer);
        scope.stableTimer = setTimeout(() => {
          scope.stableTimer = undefined;
          if (current() && scope.healthy) scope.attempt = 0;
        }, STABLE_WATCH_MS);
        scope.stableTimer.unref();
      }
      return ctrl;
    };

    const path =
      scope.namespace === '' ? '/api/v1/pods' : `/api/v1/namespaces/${encodeURIComponent(scope.namespace)}/pods`;
    const lw = new k8s.ListWatch<K8s.V1Pod>(path, guardedWatch, listFn, false, options.labelSelector);
    lw.on('add', (pod) => current() && applyPod(scope, pod, false));
    lw.on('update', (pod) => current() && applyPod(scope, pod, false));
    lw.on('delete', (pod) => current() && applyPod(scope, pod, true));
    lw.on('error', (err: unknown) => {
      if (current()) fail(scope, err, `${phase} pods ${where}`);
    });
    scope.listWatch = lw;
    return lw.start().catch((err: unknown) => {
      if (current()) fail(scope, err, `${phase} pods ${where}`);
    });
  };

  return {
    start() {
      if (started) return started;
      stopped = false;
      started = (async () => {
        k8s = await import('@kubernetes/client-node');
        kubeConfig = loadKubeConfig(k8s, options.connection);
        core = kubeConfig.makeApiClient(k8s.CoreV1Api);
        for (const namespace of scopeNames) {
          scopes.push({
            namespace,
            targets: new Map(),
            healthy: false,
            lastError: null,
            lastSyncAt: null,
            generation: 0,
            listWatch: undefined,
            attempt: 0,
            retryTimer: undefined,
            stableTimer: undefined,
            watches: new Set(),
          });
        }
        await Promise.all(scopes.map((s) => connect(s)));
      })();
      return started;
    },

    async stop() {
      stopped = true;
      if (started) await started.catch(() => undefined);
      // A list still in flight is not awaited: its result is ignored, and the guarded watch
      // aborts any watch the library tries to open after this point.
      for (const s of scopes) {
        clearTimers(s);
        retire(s);
      }
    },

    targets: () => cachedTargets,
    status,

    on,
  };

  function on(event: 'change', cb: (targets: Target[]) => void): () => void;
  function on(event: 'status', cb: (status: DiscoveryStatus) => void): () => void;
  function on(
    event: 'change' | 'status',
    cb: ((targets: Target[]) => void) | ((status: DiscoveryStatus) => void),
  ): () => void {
    if (event === 'change') {
      const f = cb as (targets: Target[]) => void;
      changeListeners.add(f);
      return () => void changeListeners.delete(f);
    }
    const f = cb as (status: DiscoveryStatus) => void;
    statusListeners.add(f);
    return () => void statusListeners.delete(f);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
