/**
 * `serve --kubernetes` against a fake API server: pods found by namespace and selector are scraped,
 * their queues reported, discovery's status shown; a pod that goes away leaves the targets; a kubeconfig
 * that cannot be loaded stops the start with the key named.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import { ConfigError } from '../../src/config/config-error.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import type { TargetsView } from '../../src/service/target-status.js';
import { type LiveSimulation, startLiveSimulation } from '../../src/simulate/index.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';

const silent = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'wqd-serve-kube-'));
let fake: FakeKubeApi;
let live: LiveSimulation;
let kubeconfig: string;

beforeAll(async () => {
  fake = await FakeKubeApi.start();
  live = await startLiveSimulation({ scenario: 'hot-loop-status-write', listen: '127.0.0.1:0' });
  kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
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
      '  user: { token: t }',
      'contexts:',
      '- name: test',
      '  context: { cluster: fake, user: robot }',
      'current-context: test',
    ].join('\n'),
  );
});

afterAll(async () => {
  await live.stop();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 600; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('serve --kubernetes', () => {
  it('scrapes the pods discovery finds and follows them', async () => {
    const port = new URL(live.url).port;
    const pod = {
      namespace: 'ops',
      name: 'ctl-0',
      labels: { app: 'ctl' },
      annotations: { 'prometheus.io/port': port },
      podIP: '127.0.0.1',
      containers: [{ name: 'manager', ports: [Number(port)] }],
    };
    fake.put(pod);
    fake.put({ ...pod, name: 'other', labels: { app: 'other' } });
    const config = resolveServiceConfig({
      flags: {
        kubernetes: true,
        kubeconfig,
        namespace: ['ops'],
        selector: 'app=ctl',
        listen: '127.0.0.1:0',
        scrapeInterval: '1s',
        evaluationInterval: '1s',
      },
      env: {},
    });
    const server: RunningServer = await startServer(config, { logger: silent, processMetrics: false });
    try {
      const targets = async () => (await (await fetch(`${server.origin}/api/v1/targets`)).json()) as TargetsView;
      const found = await until(async () => {
        const t = await targets();
        return t.mode === 'scrape' && t.targets.some((x) => x.up) ? t : undefined;
      }, 'the pod to be scraped');
      if (found.mode !== 'scrape') throw new Error('expected scrape mode');
      expect(found.targets).toMatchObject([
        {
          key: `pod/ops/ctl-0:${port}`,
          target: `ctl/127.0.0.1:${port}`,
          up: true,
          labels: { namespace: 'ops', pod: 'ctl-0' },
        },
      ]);
      expect(found.discovery).toMatchObject({ kind: 'kubernetes', healthy: true, lastError: null });
      expect(fake.lists().at(-1)?.query.get('labelSelector')).toBe('app=ctl');

      const report = await until(async () => {
        const r = (await (await fetch(`${server.origin}/api/v1/diagnosis`)).json()) as Report;
        return r.queues?.some((q) => q.queue.name === 'ingress-status') ? r : undefined;
      }, 'the pod queue in the report');
      expect(report.queues.find((q) => q.queue.name === 'ingress-status')?.queue.target).toBe(`ctl/127.0.0.1:${port}`);

      fake.remove('ops', 'ctl-0');
      await until(async () => {
        const t = await targets();
        return t.mode === 'scrape' && t.targets.length === 0 ? true : undefined;
      }, 'the pod to leave the targets');
    } finally {
      await server.close();
    }
  });

  it('stops the start with the key named when the kubeconfig cannot be loaded', async () => {
    const config = resolveServiceConfig({
      flags: { kubernetes: true, kubeconfig: join(dir, 'absent'), listen: '127.0.0.1:0' },
      env: {},
    });
    const start = startServer(config, { logger: silent, processMetrics: false });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow(/^--kubeconfig: cannot start Kubernetes discovery: /);
  });
});
