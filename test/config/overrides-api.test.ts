/**
 * Overrides from a configuration file, end to end through the API: rule-wide and per-queue thresholds
 * show in `/api/v1/rules` (values, PromQL), and change the report; a silenced queue leaves the report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import type { RulesView } from '../../src/server/rules-view.js';
import { expectValid, mixedReport, type TestApp, testApp, validateReport } from '../server/helpers.js';

const FILE = [
  'rules:',
  '  WorkqueueBacklog:',
  '    thresholds: { minDepth: 25 }',
  '    for: 12m',
  'queues:',
  '  - name: pod',
  '    rules:',
  '      WorkqueueBacklog: { thresholds: { minDepth: 100000 } }',
  '  - name: ingress-status',
  '    silenced: true',
  '  - controller: dbuser',
  '    rules:',
  '      WorkqueuePersistentFailures: { disabled: true }',
].join('\n');

let plain: Report;
let configured: TestApp;
let report: Report;

beforeAll(async () => {
  const config = resolveServiceConfig({ flags: {}, env: {}, file: { path: 'config.yaml', text: FILE } });
  plain = await mixedReport();
  report = await mixedReport(config.overrides);
  configured = await testApp({ report, overrides: config.overrides });
});
afterAll(() => configured.app.close());

describe('overrides in /api/v1/rules', () => {
  it('shows the rule-wide thresholds in force, in the values and in the PromQL', async () => {
    const body = (await configured.app.inject('/api/v1/rules')).json() as RulesView;
    const backlog = body.rules.find((r) => r.id === 'WorkqueueBacklog');
    expect(backlog?.thresholds.minDepth).toMatchObject({ value: 25, default: 20, unit: 'items' });
    expect(backlog?.for).toBe('12m');
    expect(backlog?.expr).toContain('>= 25');
    expect(backlog?.expr).not.toContain('>= 20)');
  });

  it('lists each queue override with what it changes', async () => {
    const body = (await configured.app.inject('/api/v1/rules')).json() as RulesView;
    expect(body.queueOverrides.map((q) => [q.match, q.silenced])).toEqual([
      [{ name: 'pod', controller: null }, false],
      [{ name: 'ingress-status', controller: null }, true],
      [{ name: null, controller: 'dbuser' }, false],
    ]);
    const pod = body.queueOverrides[0];
    expect(pod?.rules.map((r) => r.id)).toEqual(['WorkqueueBacklog']);
    expect(pod?.rules[0]?.thresholds.minDepth?.value).toBe(100000);
    expect(pod?.rules[0]?.for).toBe('12m');
    expect(pod?.rules[0]?.expr).toContain('>= 100000');
    expect(body.queueOverrides[1]?.rules).toEqual([]);
    const dbuser = body.queueOverrides[2]?.rules;
    expect(dbuser?.map((r) => [r.id, r.enabled])).toEqual([['WorkqueuePersistentFailures', false]]);
  });
});

describe('overrides in the report', () => {
  it('applies per-queue thresholds, disabled rules and silencing', async () => {
    const response = await configured.app.inject('/api/v1/diagnosis');
    const body = response.json() as Report;
    expectValid(validateReport, body);
    const rules = (r: Report, name: string) => r.queues.find((q) => q.queue.name === name)?.findings.map((f) => f.rule);

    // Without overrides: as the scenario's truth says.
    expect(rules(plain, 'pod')).toContain('WorkqueueBacklog');
    expect(rules(plain, 'ingress-status')).toContain('WorkqueueHotLoop');
    expect(rules(plain, 'dbuser')).toContain('WorkqueuePersistentFailures');

    expect(rules(body, 'pod')).not.toContain('WorkqueueBacklog');
    expect(body.queues.map((q) => q.queue.name)).not.toContain('ingress-status');
    expect(rules(body, 'dbuser')).not.toContain('WorkqueuePersistentFailures');
    expect(rules(body, 'volumesnapshot')).toContain('WorkqueueSlowWork');

    const metrics = (await configured.app.inject('/metrics')).body;
    expect(metrics).not.toContain('name="ingress-status"');
    expect(metrics).toContain('rule="WorkqueueSlowWork"');
  });
});
