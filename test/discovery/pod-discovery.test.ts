import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createPodDiscovery,
  type DiscoveryStatus,
  type PodDiscovery,
  type PodDiscoveryOptions,
} from '../../src/discovery/kubernetes.js';
import { ANNOTATION } from '../../src/discovery/pod-target.js';
import type { Target } from '../../src/discovery/target.js';
import { FakeKubeApi, type FakePodSpec } from '../support/fake-kube-api.js';
import { freePort, waitFor } from '../support/local-server.js';
import { makeSelfSignedCert } from '../support/tls.js';

const TOKEN = 'sa-token-1';
const SELECTOR = 'app.kubernetes.io/part-of=ops';
const PART_OF = { 'app.kubernetes.io/part-of': 'ops' };

function ctrlPod(name: string, o: Partial<FakePodSpec> = {}): FakePodSpec {
  return {
    namespace: 'mon',
    name,
    labels: { ...PART_OF, 'app.kubernetes.io/name': 'widget-operator' },
    annotations: { [ANNOTATION.port]: '8080' },
    podIP: `10.1.0.${name.length}`,
    containers: [{ name: 'manager', ports: [8080] }],
    ...o,
  };
}

const urls = (d: PodDiscovery): string[] => d.targets().map((t) => t.url);
const keys = (d: PodDiscovery): string[] => d.targets().map((t) => t.key);

let fake: FakeKubeApi;
const discoveries: PodDiscovery[] = [];
const cleanups: Array<() => void | Promise<void>> = [];

function discover(o: Partial<PodDiscoveryOptions> = {}): PodDiscovery {
  const d = createPodDiscovery({
    connection: { kind: 'server', server: fake.origin, token: TOKEN, skipTLSVerify: true },
    namespaces: ['mon'],
    labelSelector: SELECTOR,
    backoff: { initialMs: 20, maxMs: 100 },
    ...o,
  });
  discoveries.push(d);
  return d;
}

beforeEach(async () => {
  fake = await FakeKubeApi.start();
});
afterEach(async () => {
  await Promise.all(discoveries.splice(0).map((d) => d.stop()));
  await fake.close();
  for (const c of cleanups.splice(0)) await c();
});

describe('pod discovery over list+watch', () => {
  it('lists, then follows pods being added, changed and deleted', async () => {
    fake.put(ctrlPod('alpha', { podIP: '10.1.0.1' }));
    fake.put(ctrlPod('pending', { phase: 'Pending', podIP: undefined }));
    fake.put(ctrlPod('other', { labels: { app: 'unrelated' }, podIP: '10.1.0.9' }));
    const d = discover();
    const changes: Target[][] = [];
    d.on('change', (t) => changes.push(t));
    const statuses: DiscoveryStatus[] = [];
    d.on('status', (s) => statuses.push(s));
    const listsBefore = fake.lists().length;
    await d.start();

    expect(d.targets()).toEqual([
      {
        key: 'pod/mon/alpha:8080',
        url: 'http://10.1.0.1:8080/metrics',
        labels: {
          namespace: 'mon',
          pod: 'alpha',
          container: 'manager',
          job: 'widget-operator',
          instance: '10.1.0.1:8080',
        },
      },
    ]);
    const list = fake.lists()[listsBefore]!;
    expect(list.path).toBe('/api/v1/namespaces/mon/pods');
    expect(list.query.get('labelSelector')).toBe(SELECTOR);
    expect(list.authorization).toBe(`Bearer ${TOKEN}`);
    await waitFor('the watch', () => fake.openWatches === 1);
    const watch = fake.watches().at(-1)!;
    expect(watch.query.get('resourceVersion')).toBe(fake.resourceVersion);
    expect(watch.query.get('labelSelector')).toBe(SELECTOR);
    await waitFor('healthy', () => d.status().healthy);
    expect(d.status().lastSyncAt).not.toBeNull();
    expect(d.status().lastError).toBeNull();
    expect(statuses.at(-1)?.healthy).toBe(true);

    // the pending pod starts running
    fake.put(ctrlPod('pending', { podIP: '10.1.0.2' }));
    await waitFor('pending pod to become a target', () => keys(d).includes('pod/mon/pending:8080'));
    // a new pod
    fake.put(ctrlPod('beta', { podIP: '10.1.0.3' }));
    await waitFor('beta', () => keys(d).includes('pod/mon/beta:8080'));
    // IP change (same key, new URL)
    fake.put(ctrlPod('alpha', { podIP: '10.1.0.11' }));
    await waitFor('alpha on its new IP', () => urls(d).includes('http://10.1.0.11:8080/metrics'));
    expect(keys(d)).toEqual(['pod/mon/alpha:8080', 'pod/mon/beta:8080', 'pod/mon/pending:8080']);
    // annotation change: another port and path
    fake.put(
      ctrlPod('beta', { podIP: '10.1.0.3', annotations: { [ANNOTATION.port]: '9090', [ANNOTATION.path]: '/m' } }),
    );
    await waitFor('beta on port 9090', () => urls(d).includes('http://10.1.0.3:9090/m'));
    expect(keys(d)).toContain('pod/mon/beta:9090');
    expect(keys(d)).not.toContain('pod/mon/beta:8080');
    // phase change: the pod finished
    fake.put(ctrlPod('pending', { podIP: '10.1.0.2', phase: 'Succeeded' }));
    await waitFor('finished pod to go', () => !keys(d).includes('pod/mon/pending:8080'));
    // deletion
    fake.remove('mon', 'alpha');
    await waitFor('alpha to go', () => !keys(d).includes('pod/mon/alpha:8080'));
    expect(keys(d)).toEqual(['pod/mon/beta:9090']);
    // a pod outside the selector never shows up, and modifying it changes nothing
    fake.put(ctrlPod('other', { labels: { app: 'unrelated' }, podIP: '10.1.0.10' }));

    expect(changes.at(-1)).toEqual(d.targets());
    // every 'change' carried a different target list than the one before
    for (let i = 1; i < changes.length; i++) expect(changes[i]).not.toEqual(changes[i - 1]);
    expect(fake.lists().length).toBe(listsBefore + 1);
    expect(d.status().healthy).toBe(true);
  });

  it('resumes a watch that ends, from the last resource version, without re-listing', async () => {
    fake.put(ctrlPod('gamma'));
    const d = discover();
    await d.start();
    await waitFor('the watch', () => fake.openWatches === 1);
    const lists = fake.lists().length;
    const watches = fake.watches().length;
    const rvSeen = fake.resourceVersion;
    fake.endWatches();
    await waitFor('a new watch', () => fake.watches().length > watches && fake.openWatches === 1);
    expect(fake.watches().at(-1)?.query.get('resourceVersion')).toBe(rvSeen);
    fake.put(ctrlPod('delta'));
    await waitFor('delta', () => keys(d).includes('pod/mon/delta:8080'));
    expect(fake.lists().length).toBe(lists);
    expect(d.status().healthy).toBe(true);
  });

  it('re-lists after ERROR 410 Gone and reconciles changes it missed', async () => {
    fake.put(ctrlPod('epsilon'));
    fake.put(ctrlPod('zeta'));
    const d = discover();
    await d.start();
    await waitFor('the watch', () => fake.openWatches === 1);
    expect(keys(d)).toEqual(['pod/mon/epsilon:8080', 'pod/mon/zeta:8080']);
    const lists = fake.lists().length;
    // changes the watch never reports, then the history is compacted away
    fake.changeSilently(() => {
      fake.remove('mon', 'zeta');
      fake.put(ctrlPod('eta'));
      fake.put(ctrlPod('epsilon', { podIP: '10.1.0.99' }));
    });
    fake.sendGone();
    await waitFor('the re-list to show the missed changes', () =>
      keys(d).join() === 'pod/mon/epsilon:8080,pod/mon/eta:8080' ? true : undefined,
    );
    expect(urls(d)).toContain('http://10.1.0.99:8080/metrics');
    expect(fake.lists().length).toBe(lists + 1);
    await waitFor('the new watch', () => fake.openWatches === 1);
    expect(d.status().healthy).toBe(true);
  });

  it('keeps the last targets on 403, reports it, retries with backoff, and recovers', async () => {
    fake.put(ctrlPod('theta'));
    const d = discover();
    const statuses: DiscoveryStatus[] = [];
    d.on('status', (s) => statuses.push(s));
    await d.start();
    await waitFor('healthy', () => d.status().healthy);
    const before = d.targets();
    expect(keys(d)).toEqual(['pod/mon/theta:8080']);

    fake.forbidden = true;
    fake.endWatches();
    await waitFor('unhealthy', () => !d.status().healthy);
    const bad = d.status();
    expect(bad.lastError?.status).toBe(403);
    expect(bad.lastError?.message).toMatch(/^(watch|list) pods in namespace mon: HTTP 403/);
    expect(bad.namespaces['mon']?.healthy).toBe(false);
    expect(statuses.some((s) => !s.healthy)).toBe(true);
    expect(d.targets()).toEqual(before);
    // it keeps trying
    const forbiddenSoFar = fake.requests.filter((r) => r.status === 403).length;
    await waitFor('more attempts', () => fake.requests.filter((r) => r.status === 403).length >= forbiddenSoFar + 3);
    expect(d.status().consecutiveFailures).toBeGreaterThanOrEqual(3);
    expect(d.targets()).toEqual(before);
    // retries re-list, and the list's error carries the API server's reason
    expect(d.status().lastError?.message).toMatch(
      /^list pods in namespace mon: HTTP 403: pods is forbidden: User "system:serviceaccount:mon:workqueue-doctor" cannot list/,
    );

    // the world moves on meanwhile; once allowed again the re-list catches up
    fake.put(ctrlPod('iota'));
    fake.remove('mon', 'theta');
    fake.forbidden = false;
    await waitFor('healthy again', () => d.status().healthy);
    await waitFor('targets caught up', () => keys(d).join() === 'pod/mon/iota:8080');
    expect(d.status().lastError?.status).toBe(403); // the last error stays on record
    expect(d.status().consecutiveFailures).toBe(0);
    expect(statuses.at(-1)?.healthy).toBe(true);
  });

  it('reports an unreachable API server from start() on, and keeps retrying', async () => {
    const port = await freePort();
    const d = discover({ connection: { kind: 'server', server: `http://127.0.0.1:${port}`, skipTLSVerify: true } });
    await d.start();
    const s = d.status();
    expect(s.healthy).toBe(false);
    expect(s.lastError?.message).toMatch(/^list pods in namespace mon: .*ECONNREFUSED/);
    expect(s.lastSyncAt).toBeNull();
    expect(d.targets()).toEqual([]);
    await waitFor('retries', () => d.status().consecutiveFailures >= 3);
  });

  it('treats a watch that keeps ending at once as a failure instead of spinning', async () => {
    fake.put(ctrlPod('kappa'));
    fake.closeWatchesAtOnce = true;
    const d = discover();
    await d.start();
    await waitFor('the failure', () => d.status().lastError?.message.includes('ended at once'));
    expect(keys(d)).toEqual(['pod/mon/kappa:8080']);
    fake.closeWatchesAtOnce = false;
    await waitFor('a lasting watch', () => fake.openWatches === 1 && d.status().healthy);
  });

  it('watches several namespaces, or all of them', async () => {
    fake.put(ctrlPod('a1', { namespace: 'team-a' }));
    fake.put(ctrlPod('b1', { namespace: 'team-b' }));
    fake.put(ctrlPod('c1', { namespace: 'team-c' }));
    const two = discover({ namespaces: ['team-a', 'team-b', 'team-a'] });
    await two.start();
    expect(keys(two)).toEqual(['pod/team-a/a1:8080', 'pod/team-b/b1:8080']);
    expect(Object.keys(two.status().namespaces).sort()).toEqual(['team-a', 'team-b']);
    await waitFor('healthy', () => two.status().healthy);

    const all = discover({ namespaces: [] });
    const lists = fake.lists().length;
    await all.start();
    expect(fake.lists()[lists]?.path).toBe('/api/v1/pods');
    expect(keys(all)).toEqual(['pod/team-a/a1:8080', 'pod/team-b/b1:8080', 'pod/team-c/c1:8080']);
    fake.remove('team-c', 'c1');
    await waitFor('c1 to go', () => !keys(all).includes('pod/team-c/c1:8080'));
    expect(Object.keys(all.status().namespaces)).toEqual(['']);
  });

  it('stops its watches and fires nothing after stop()', async () => {
    fake.put(ctrlPod('lambda'));
    const d = discover();
    let changes = 0;
    d.on('change', () => changes++);
    await d.start();
    await waitFor('the watch', () => fake.openWatches === 1);
    await d.stop();
    await waitFor('the watch to close', () => fake.openWatches === 0);
    const seen = changes;
    const requests = fake.requests.length;
    fake.put(ctrlPod('mu'));
    fake.remove('mon', 'lambda');
    fake.endWatches();
    await new Promise((r) => setTimeout(r, 100));
    expect(changes).toBe(seen);
    expect(fake.requests.length).toBe(requests);
  });

  it('connects with a kubeconfig file and its context', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wqd-kubeconfig-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: fake',
        '  cluster:',
        `    server: ${fake.origin}`,
        '    insecure-skip-tls-verify: true',
        'users:',
        '- name: robot',
        '  user:',
        '    token: from-kubeconfig',
        'contexts:',
        '- name: other',
        '  context: { cluster: fake, user: robot, namespace: default }',
        '- name: test',
        '  context: { cluster: fake, user: robot, namespace: mon }',
        'current-context: other',
        '',
      ].join('\n'),
    );
    fake.put(ctrlPod('nu'));
    const d = discover({ connection: { kind: 'kubeconfig', path: file, context: 'test' } });
    await d.start();
    expect(keys(d)).toEqual(['pod/mon/nu:8080']);
    expect(fake.lists().at(-1)?.authorization).toBe('Bearer from-kubeconfig');
    const bad = discover({ connection: { kind: 'kubeconfig', path: file, context: 'nope' } });
    await expect(bad.start()).rejects.toThrow('has no context "nope"');
    const missing = discover({ connection: { kind: 'kubeconfig', path: join(dir, 'absent') } });
    await expect(missing.start()).rejects.toThrow(/cannot load kubeconfig/);
  });

  it('rejects a plain-http server without skipTLSVerify, with the reason', async () => {
    const d = discover({ connection: { kind: 'server', server: fake.origin, token: TOKEN } });
    await expect(d.start()).rejects.toThrow(/plain http: the client library requires skipTLSVerify/);
  });
});

describe('pod discovery in-cluster (service account, TLS)', () => {
  it('uses the mounted token and CA against an https API server', async () => {
    const cert = makeSelfSignedCert();
    const api = await FakeKubeApi.start(cert);
    const root = mkdtempSync(join(tmpdir(), 'wqd-incluster-'));
    const saved = { host: process.env['KUBERNETES_SERVICE_HOST'], port: process.env['KUBERNETES_SERVICE_PORT'] };
    cleanups.push(async () => {
      if (saved.host === undefined) delete process.env['KUBERNETES_SERVICE_HOST'];
      else process.env['KUBERNETES_SERVICE_HOST'] = saved.host;
      if (saved.port === undefined) delete process.env['KUBERNETES_SERVICE_PORT'];
      else process.env['KUBERNETES_SERVICE_PORT'] = saved.port;
      await api.close();
      rmSync(root, { recursive: true, force: true });
      cert.remove();
    });
    const sa = join(root, 'var/run/secrets/kubernetes.io/serviceaccount');
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, 'token'), 'in-cluster-token');
    writeFileSync(join(sa, 'ca.crt'), cert.cert);
    writeFileSync(join(sa, 'namespace'), 'mon');
    process.env['KUBERNETES_SERVICE_HOST'] = '127.0.0.1';
    process.env['KUBERNETES_SERVICE_PORT'] = String(api.port);
    api.put(ctrlPod('xi', { annotations: {}, containers: [{ name: 'proxy', ports: [8443] }] }));

    const d = createPodDiscovery({
      connection: { kind: 'in-cluster', pathPrefix: root },
      namespaces: ['mon'],
      defaults: { port: 8443, scheme: 'https', job: 'fleet' },
      backoff: { initialMs: 20, maxMs: 100 },
    });
    discoveries.push(d);
    await d.start();
    expect(d.targets()).toEqual([
      {
        key: 'pod/mon/xi:8443',
        url: 'https://10.1.0.2:8443/metrics',
        labels: { namespace: 'mon', pod: 'xi', container: 'proxy', job: 'fleet', instance: '10.1.0.2:8443' },
      },
    ]);
    expect(api.lists()[0]?.authorization).toBe('Bearer in-cluster-token');
    await waitFor('healthy', () => d.status().healthy);
  });

  it('refuses in-cluster mode outside a cluster', async () => {
    const saved = process.env['KUBERNETES_SERVICE_HOST'];
    delete process.env['KUBERNETES_SERVICE_HOST'];
    cleanups.push(() => {
      if (saved !== undefined) process.env['KUBERNETES_SERVICE_HOST'] = saved;
    });
    const d = createPodDiscovery({ connection: { kind: 'in-cluster' } });
    discoveries.push(d);
    await expect(d.start()).rejects.toThrow(/not running in a Kubernetes pod/);
  });
});
