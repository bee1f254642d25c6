/**
 * Pending and unknown through every surface of the service: a hot loop four minutes old (its rule's `for` is
 * five) is a pending finding with the time it fires, and the rules whose range four minutes do not span are
 * unknown with their reasons. The report (valid against the schema), `?status=` filters, the page and
 * `/metrics` all say so; nothing about it is counted as firing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { Report } from '../../src/diagnosis/report.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { apiWrites, queueSeries, seriesRecording, timeMs } from '../support/series-recording.js';
import { expectValid, type TestApp, testApp, validateReport } from './helpers.js';

const TARGET = { job: 'ctrl', instance: 'b:8080' };
const AGE_S = 4 * 60;

let report: Report;
let app: TestApp;

beforeAll(async () => {
  const looping = queueSeries(
    { ...TARGET, controller: 'looping', name: 'looping' },
    { depth: () => 0, adds: (t) => 80 * t, completions: (t) => 80 * t },
  );
  const text = seriesRecording({ series: [...looping, apiWrites(TARGET, 80)], durationSec: AGE_S });
  const source = recordingSourceFromText(text, 'young-loop.om');
  const range = source.dataRange();
  report = await diagnose(source.backend, {
    atMs: range?.endMs ?? 0,
    runbookBaseUrl: 'https://runbooks.invalid',
    targets: source.targets(),
    ...(range !== undefined ? { historyStartMs: range.startMs } : {}),
  });
  app = await testApp({ report });
});

afterAll(async () => {
  await app.app.close();
});

describe('pending and unknown', () => {
  it('the report: a pending finding with since and firesAt one `for` later, unknown rules with reasons', () => {
    expectValid(validateReport, report);
    const queue = report.queues.find((q) => q.queue.name === 'looping');
    expect(queue?.status).toBe('pending');
    const finding = queue?.findings.find((f) => f.rule === 'WorkqueueHotLoop');
    expect(finding?.state).toBe('pending');
    const since = Date.parse(finding?.since ?? '');
    expect(since).toBeGreaterThanOrEqual(timeMs(0));
    expect(Date.parse(finding?.firesAt ?? '')).toBe(since + 5 * 60_000);
    expect(queue?.unknown?.map((u) => u.rule)).toContain('WorkqueuePersistentFailures');
    for (const u of queue?.unknown ?? []) expect(u.reason).toMatch(/^window 4m is shorter than the rule's range /);
  });

  it('?status=pending and ?status=unknown select by state; ok selects nothing', async () => {
    const names = async (status: string) =>
      ((await app.app.inject(`/api/v1/diagnosis?status=${status}`)).json() as Report).queues.map((q) => q.queue.name);
    expect(await names('pending')).toEqual(['looping']);
    expect(await names('ok')).toEqual([]);
    expect(await names('warning,critical')).toEqual([]);
  });

  it('the page shows the pending finding with the time it fires, and the rules not judged with why', async () => {
    const html = (await app.app.inject('/')).body;
    expect(html).toContain('data-state="pending"');
    expect(html).toMatch(/pending: fires at .* if it keeps holding/);
    expect(html).toContain('Not judged');
    expect(html).toContain('WorkqueuePersistentFailures</strong>: window 4m is shorter than the rule&#39;s range');
  });

  it('/metrics: a fires-at series for the pending finding, unknown-rule series, no finding series', async () => {
    const body = (await app.app.inject('/metrics')).body;
    expect(body).not.toMatch(/^workqueue_doctor_finding\{/m);
    const firesAt = report.queues.flatMap((q) => q.findings).find((f) => f.rule === 'WorkqueueHotLoop')?.firesAt;
    expect(body).toContain(
      `workqueue_doctor_pending_finding_fires_at_seconds{rule="WorkqueueHotLoop",severity="warning",target="ctrl/b:8080",name="looping",controller="looping"} ${Date.parse(firesAt ?? '') / 1000}`,
    );
    expect(body).toMatch(
      /^workqueue_doctor_unknown_rule\{rule="WorkqueuePersistentFailures",target="ctrl\/b:8080",name="looping",controller="looping"\} 1$/m,
    );
    expect(body).toMatch(/^workqueue_doctor_queues\{status="pending"\} 1$/m);
  });
});
