/**
 * The live simulation on the real clock: `/metrics` in Prometheus text and in OpenMetrics, values
 * moving, a clean stop.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { type LiveSimulation, parseListen, startLiveSimulation } from '../../src/simulate/index.js';
import { promtoolCheckMetrics } from '../support/prometheus.js';

let live: LiveSimulation | undefined;
afterEach(async () => {
  await live?.stop();
  live = undefined;
});

async function addsOf(url: string, name: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${WORKQUEUE.adds}{`) && l.includes(`name="${name}"`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('condition not reached');
}

describe('startLiveSimulation', () => {
  it('serves Prometheus text and OpenMetrics on 127.0.0.1, with the queue moving', async () => {
    live = await startLiveSimulation({ scenario: 'hot-loop-status-write', listen: '127.0.0.1:0' });
    expect(live.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(live.truth.queues[0]?.expected).toEqual(['WorkqueueHotLoop']);
    const url = live.url;
    await eventually(async () => (await addsOf(url, 'ingress-status')) > 20);

    const text = await fetch(url);
    expect(text.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await text.text();
    expect(body).toContain('# TYPE workqueue_adds_total counter');
    expect(body).toContain('controller_runtime_reconcile_total{controller="ingress-status",result="success"}');
    const lint = await promtoolCheckMetrics(body);
    expect(lint.code, lint.output).toBe(0);

    const om = await fetch(url, { headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
    expect(om.headers.get('content-type')).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
    const omBody = await om.text();
    expect(omBody.endsWith('# EOF\n')).toBe(true);
    expect(omBody).toContain('# TYPE workqueue_adds counter');
    expect(omBody).toMatch(/^workqueue_adds_total\{controller="ingress-status",name="ingress-status"\} \d+$/m);
    expect(omBody).toMatch(/^workqueue_queue_duration_seconds_bucket\{.*le="\+Inf"\} \d+$/m);

    expect((await fetch(url.replace('/metrics', '/nope'))).status).toBe(404);

    await live.stop();
    live = undefined;
    await expect(fetch(url)).rejects.toThrow();
  });

  it('runs a standby and a stuck worker live', async () => {
    live = await startLiveSimulation({ scenario: 'standby', params: { flavor: 'component-base' } });
    const body = await (await fetch(live.url)).text();
    expect(body).toMatch(/^leader_election_master_status\{name="kube-controller-manager"\} 0$/m);
    expect(body).not.toContain('workqueue_');
    await live.stop();
    live = await startLiveSimulation({ scenario: 'stuck-worker', params: { durationMs: 1_000 } });
    const url = live.url;
    await eventually(async () =>
      /^workqueue_longest_running_processor_seconds\{[^}]*\} 0\.[5-9]/m.test(await (await fetch(url)).text()),
    );
  });

  it('rejects a bad listen address', async () => {
    expect(() => parseListen('localhost')).toThrow(/host:port/);
    expect(() => parseListen('127.0.0.1:70000')).toThrow(/host:port/);
    expect(parseListen('[::1]:9090')).toEqual({ host: '::1', port: 9090 });
    expect(parseListen(':9090')).toEqual({ host: '0.0.0.0', port: 9090 });
    await expect(startLiveSimulation({ scenario: 'healthy', listen: 'nope' })).rejects.toThrow(/listen address/);
    await expect(startLiveSimulation({ scenario: 'nope' })).rejects.toThrow(/unknown scenario/);
  });
});
