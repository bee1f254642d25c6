/**
 * Prometheus mode with series that carry neither `job` nor `instance` (federation, remote write without target
 * labels, a plain capture imported as is): a real Prometheus holding such a recording gives ONE target, named
 * after the Prometheus URL without credentials, with the same queues and findings as the recording replayed
 * in-process, no `WorkqueueNotObservable` phantom, and `diagnose` exits on the real findings only.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { diagnose } from '../../src/diagnosis/engine.js';
import { isFiring, type Report } from '../../src/diagnosis/report.js';
import { prometheusTargetName } from '../../src/prometheus/prometheus-backend.js';
import { runVirtual } from '../../src/simulate/index.js';
import { createPrometheusSource } from '../../src/sources/prometheus-source.js';
import { openRecordingSource } from '../../src/sources/recording-source.js';
import { runCli } from '../support/cli.js';
import { importRecordings, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';
import { withoutTargetLabels } from '../support/recordings.js';

const RUNBOOKS = 'https://runbooks.example/workqueue';
const work = mkdtempSync(join(tmpdir(), 'wqd-unlabelled-prom-'));
const recording = join(work, 'stuck-worker-plain.om');
let prom: PrometheusHandle;
let endMs = 0;

function targetsOf(report: Report): string[] {
  return [...new Set(report.queues.map((q) => q.queue.target))].sort();
}

function rulesOf(report: Report): string[] {
  return report.queues.flatMap((q) => q.findings.filter(isFiring).map((f) => f.rule));
}

/** Queue identity without the target, status and findings: what must not depend on the target's name. */
function shape(report: Report) {
  return report.queues.map((q) => ({
    name: q.queue.name,
    controller: q.queue.controller,
    status: q.status,
    findings: q.findings.map((f) => [f.rule, f.since]),
    signals: Object.keys(q.signals).sort(),
  }));
}

beforeAll(async () => {
  const run = await runVirtual('stuck-worker', { seed: 4 });
  writeFileSync(recording, withoutTargetLabels(run.recording.text()));
  expect(readFileSync(recording, 'utf8')).not.toMatch(/job=|instance=/);
  const source = await openRecordingSource(recording);
  endMs = source.dataRange()?.endMs ?? 0;
  await source.close();
  prom = await startPrometheus({ storagePath: await importRecordings([recording]) });
}, 240_000);

afterAll(async () => {
  await prom?.stop();
  removeTempDirs();
  rmSync(work, { recursive: true, force: true });
});

describe('prometheusTargetName', () => {
  it('is the URL without credentials, query, fragment or trailing slash', () => {
    expect(prometheusTargetName('http://127.0.0.1:9090')).toBe('http://127.0.0.1:9090');
    expect(prometheusTargetName('http://127.0.0.1:9090/')).toBe('http://127.0.0.1:9090');
    expect(prometheusTargetName('https://user:s3cret@mimir.example/prometheus/?token=x#y')).toBe(
      'https://mimir.example/prometheus',
    );
  });
});

describe('Prometheus mode, series without job and instance', () => {
  it('one target named after the URL, same queues and findings as in-process, no phantom', {
    timeout: 120_000,
  }, async () => {
    const local = await openRecordingSource(recording);
    const inProcess = await diagnose(local.backend, {
      atMs: endMs,
      runbookBaseUrl: RUNBOOKS,
      targets: local.targets(),
    });
    await local.close();
    const url = new URL(prom.url);
    url.username = 'user';
    url.password = 's3cret';
    const source = createPrometheusSource({ url: url.toString(), timeoutMs: 60_000 });
    const report = await diagnose(source.backend, { atMs: endMs, runbookBaseUrl: RUNBOOKS, targets: source.targets() });
    await source.close();

    expect(targetsOf(inProcess)).toEqual(['stuck-worker-plain.om']);
    expect(targetsOf(report)).toEqual([prom.url]);
    expect(JSON.stringify(report)).not.toContain('s3cret');
    expect(rulesOf(report)).not.toContain('WorkqueueNotObservable');
    expect(rulesOf(report)).toContain('WorkqueueStuckWorker');
    expect(shape(report)).toEqual(shape(inProcess));
  });

  it('diagnose --prometheus-url exits on the real findings only', { timeout: 120_000 }, async () => {
    const at = new Date(endMs).toISOString();
    const stuck = await runCli('diagnose', '--prometheus-url', prom.url, '--at', at, '--output', 'json');
    expect(stuck.code).toBe(EXIT.findings);
    const report = JSON.parse(stuck.stdout) as Report;
    expect(targetsOf(report)).toEqual([prom.url]);
    expect(rulesOf(report)).not.toContain('WorkqueueNotObservable');

    // Before the sync got stuck: no finding, exit 0 (no phantom target to fail the run).
    const early = await runCli(
      'diagnose',
      '--prometheus-url',
      prom.url,
      '--at',
      '2026-01-01T00:06:00Z',
      '--output',
      'json',
    );
    const earlyReport = JSON.parse(early.stdout) as Report;
    expect(rulesOf(earlyReport)).toEqual([]);
    expect(targetsOf(earlyReport)).toEqual([prom.url]);
    expect(early.code).toBe(EXIT.ok);
  });

  it('a selector that matches no work-queue series is an error naming the selector and the server', {
    timeout: 120_000,
  }, async () => {
    const at = new Date(endMs).toISOString();
    const empty = await runCli(
      'diagnose',
      '--prometheus-url',
      prom.url,
      '--fleet-selector',
      'namespace="nowhere"',
      '--at',
      at,
    );
    expect(empty.code).toBe(EXIT.usage);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toContain(prom.url);
    expect(empty.stderr).toContain('{namespace="nowhere"}');
    expect(empty.stderr).toMatch(/no work-queue or controller series/);
    // Before any data at all: the same, not an empty "ok".
    const before = await runCli('diagnose', '--prometheus-url', prom.url, '--at', '2025-01-01T00:00:00Z');
    expect(before.code).toBe(EXIT.usage);
    expect(before.stderr).toMatch(/no work-queue or controller series/);
  });
});
