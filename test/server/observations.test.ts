/**
 * Observations through the API: the report and the queue routes carry them (valid against the report
 * schema), `/api/v1/rules` lists them apart from the rules, and `workqueue_doctor_finding` never has a
 * series for one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnosis/engine.js';
import { OBSERVATION_IDS } from '../../src/diagnosis/observation.js';
import { OBSERVATIONS } from '../../src/diagnosis/observations/index.js';
import type { QueueReport, Report } from '../../src/diagnosis/report.js';
import { RULE_IDS } from '../../src/diagnosis/rule.js';
import type { RulesView } from '../../src/server/rules-view.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { apiWrites, queueSeries, seriesRecording, timeMs } from '../support/series-recording.js';
import { expectValid, type TestApp, testApp, validateQueueReport, validateReport } from './helpers.js';

const TARGET = { job: 'ctrl', instance: 'a:8080' };
const busy = (name: string) =>
  queueSeries(
    { ...TARGET, controller: name, name },
    { depth: () => 0, adds: (t) => 80 * t, completions: (t) => 80 * t },
  );

let report: Report;
let app: TestApp;

beforeAll(async () => {
  // `busy` has only the HighAddRateLowDepth observation; in another process, `looping` has the hot-loop
  // finding (its process's writes track its adds), which supersedes the observation.
  const other = { job: 'ctrl', instance: 'b:8080' };
  const looping = queueSeries(
    { ...other, controller: 'looping', name: 'looping' },
    { depth: () => 0, adds: (t) => 80 * t, completions: (t) => 80 * t },
  );
  const source = recordingSourceFromText(
    seriesRecording({ series: [...busy('busy'), ...looping, apiWrites(other, 80)] }),
    'observations.om',
  );
  report = await diagnose(source.backend, {
    atMs: timeMs(40 * 60),
    runbookBaseUrl: 'https://runbooks.example',
    targets: source.targets(),
  });
  app = await testApp({ report });
});
afterAll(async () => {
  await app.app.close();
});

function queueByName(name: string): QueueReport {
  const q = report.queues.find((x) => x.queue.name === name);
  if (q === undefined) throw new Error(`no queue ${name}`);
  return q;
}

describe('observations over the API', () => {
  it('the report has the observation on one queue and the finding (no observation) on the other', () => {
    expect(queueByName('busy').findings).toEqual([]);
    expect(queueByName('busy').observations.map((o) => o.id)).toEqual(['HighAddRateLowDepth']);
    expect(queueByName('looping').findings.map((f) => f.rule)).toEqual(['WorkqueueHotLoop']);
    expect(queueByName('looping').observations).toEqual([]);
  });

  it('GET /api/v1/diagnosis and /api/v1/queues/{id} carry them', async () => {
    const all = await app.app.inject('/api/v1/diagnosis');
    expect(all.statusCode).toBe(200);
    const body = all.json() as Report;
    expectValid(validateReport, body);
    expect(body.queues.find((q) => q.queue.name === 'busy')?.observations).toEqual(queueByName('busy').observations);

    const one = await app.app.inject(`/api/v1/queues/${encodeURIComponent(queueByName('busy').id)}`);
    expect(one.statusCode).toBe(200);
    const entry = one.json() as QueueReport;
    expectValid(validateQueueReport, entry);
    expect(entry.observations.map((o) => o.id)).toEqual(['HighAddRateLowDepth']);
    expect(entry.observations[0]?.summary).toMatch(/^80\/s added, and the keys served first fall to 0 items waiting /);
  });

  it('workqueue_doctor_finding has a series for the finding and none for the observation', async () => {
    const response = await app.app.inject('/metrics');
    const lines = response.body.split('\n').filter((l) => l.startsWith('workqueue_doctor_finding{'));
    expect(lines).toEqual([
      'workqueue_doctor_finding{rule="WorkqueueHotLoop",severity="warning",target="ctrl/b:8080",name="looping",controller="looping"} 1',
    ]);
    expect(response.body).not.toContain('HighAddRateLowDepth');
  });

  it('GET /api/v1/rules lists them under `observations`, not among the rules', async () => {
    const body = (await app.app.inject('/api/v1/rules')).json() as RulesView;
    expect(body.rules.map((r) => r.id)).toEqual([...RULE_IDS]);
    expect(body.observations.map((o) => o.id)).toEqual([...OBSERVATION_IDS]);
    for (const view of body.observations) {
      const definition = OBSERVATIONS.find((o) => o.id === view.id);
      expect(view.meaning).toBe(definition?.text.meaning);
      expect(view.title).toBe(definition?.title);
      for (const [name, spec] of Object.entries(definition?.thresholds ?? {})) {
        expect(view.thresholds[name]).toEqual({
          value: spec.default,
          default: spec.default,
          unit: spec.unit,
          description: spec.description,
        });
      }
    }
    const drain = body.observations.find((o) => o.id === 'ListDraining');
    expect(drain?.for).toBe('1m');
    expect(drain?.expr).toContain('* -0.2');
    expect(body.observations.find((o) => o.id === 'HighAddRateLowDepth')?.supersededBy).toEqual(['WorkqueueHotLoop']);
  });
});
