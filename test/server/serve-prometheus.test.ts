/**
 * `serve --prometheus-url` against a real Prometheus (2.42) holding the last 30 minutes of the `mixed`
 * scenario: the same diagnoses as in scrape mode, `/api/v1/targets` with the server's build info, and a
 * clear status when the server goes away.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../../src/cli/serve.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import type { TargetsView } from '../../src/service/target-status.js';
import { runVirtual } from '../../src/simulate/index.js';
import { importRecording, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';
import { expectValid, validateReport } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'wqd-serve-prom-'));
let prom: PrometheusHandle | undefined;
let server: RunningServer | undefined;

beforeAll(async () => {
  // Samples up to a few seconds ago, so that the service's evaluation at "now" sees them.
  const run = await runVirtual('mixed', {}, { startMs: Date.now() - 30 * 60_000, job: 'sim', instance: 'mixed:8080' });
  const file = join(dir, 'mixed.om');
  writeFileSync(file, run.recording.text());
  prom = await startPrometheus({ storagePath: await importRecording(file) });
  const config = resolveServiceConfig({
    flags: { prometheusUrl: prom.url, listen: '127.0.0.1:0', evaluationInterval: '1s' },
    env: {},
  });
  server = await startServer(config, { logger: pino({ level: 'silent' }), processMetrics: false });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await prom?.stop();
  removeTempDirs();
  rmSync(dir, { recursive: true, force: true });
});

async function json<T>(path: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${server?.origin}${path}`);
  return { status: response.status, body: (await response.json()) as T };
}

describe('serve --prometheus-url', () => {
  it('diagnoses from PromQL what scrape mode diagnoses from its history', async () => {
    let report: Report | undefined;
    for (let i = 0; i < 600 && report === undefined; i++) {
      const r = await json<Report>('/api/v1/diagnosis');
      if (r.status === 200) report = r.body;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (report === undefined) throw new Error('no report');
    expectValid(validateReport, report);
    const rules = (name: string) => report?.queues.find((q) => q.queue.name === name)?.findings.map((f) => f.rule);
    expect(rules('ingress-status')).toContain('WorkqueueHotLoop');
    expect(rules('pod')).toContain('WorkqueueBacklog');
    expect(rules('dbuser')).toContain('WorkqueuePersistentFailures');
    expect(rules('volumesnapshot')).toContain('WorkqueueSlowWork');
    expect(report.queues.find((q) => q.queue.name === 'deployment')?.status).toBe('ok');
    expect(report.queues[0]?.queue.target).toBe('sim/mixed:8080');

    const metrics = await (await fetch(`${server?.origin}/metrics`)).text();
    expect(metrics).toContain(
      'workqueue_doctor_finding{rule="WorkqueueHotLoop",severity="warning",target="sim/mixed:8080",name="ingress-status",controller="ingress-status"} 1',
    );
  });

  it('applies the fleet selector: a matching one diagnoses the same queues, one matching nothing is an error', async () => {
    const withSelector = async (selector: string) => {
      const config = resolveServiceConfig({
        flags: { prometheusUrl: prom?.url, listen: '127.0.0.1:0', evaluationInterval: '1s', fleetSelector: selector },
        env: {},
      });
      return startServer(config, { logger: pino({ level: 'silent' }), processMetrics: false });
    };
    const matching = await withSelector('job="sim"');
    const nothing = await withSelector('job="elsewhere"');
    try {
      let report: Report | undefined;
      for (let i = 0; i < 600 && report === undefined; i++) {
        const r = await fetch(`${matching.origin}/api/v1/diagnosis`);
        if (r.status === 200) report = (await r.json()) as Report;
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(report?.queues.map((q) => q.queue.name)).toContain('ingress-status');
      // Nothing matches: every evaluation fails naming the server and the selector; never an empty "ok".
      let message = '';
      for (let i = 0; i < 600 && !message.includes('no work-queue'); i++) {
        const readiness = await fetch(`${nothing.origin}/readyz`);
        expect(readiness.status).toBe(503);
        message = ((await readiness.json()) as { error: { message: string } }).error.message;
        if (!message.includes('no work-queue')) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(message).toContain(
        `no work-queue or controller series in ${prom?.url} with the selector {job="elsewhere"}`,
      );
      const diagnosis = await fetch(`${nothing.origin}/api/v1/diagnosis`);
      expect(diagnosis.status).toBe(503);
      expect(await diagnosis.text()).toContain('job=\\"elsewhere\\"');
    } finally {
      await matching.close();
      await nothing.close();
    }
  });

  it('reports the Prometheus server, then its failure, on /api/v1/targets', async () => {
    const up = await json<TargetsView>('/api/v1/targets');
    expect(up.status).toBe(200);
    if (up.body.mode !== 'prometheus') throw new Error('expected Prometheus mode');
    expect(up.body.prometheus).toMatchObject({ url: prom?.url, up: true, lastError: null });
    expect(up.body.prometheus.buildInfo?.version).toMatch(/^2\./);

    await prom?.stop();
    // The status is polled every evaluation interval (1 s here), never fetched on request.
    let down: TargetsView | undefined;
    for (let i = 0; i < 600; i++) {
      const r = await json<TargetsView>('/api/v1/targets');
      if (r.body.mode === 'prometheus' && !r.body.prometheus.up) {
        down = r.body;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(down).toMatchObject({
      mode: 'prometheus',
      prometheus: { up: false, lastError: { message: expect.stringContaining('buildinfo') } },
    });
    // The last report is kept while Prometheus is away.
    expect((await json<Report>('/api/v1/diagnosis')).status).toBe(200);
  });
});
