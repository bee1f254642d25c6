/**
 * The report contract, defined once in `src/diagnosis/report-schema.ts`: the committed
 * `schemas/report.schema.json` is what `generate` writes from it, a real report satisfies it, and it rejects
 * what the contract forbids (an unknown rule id, a queue without `observations`, an unknown unit).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Finding, QueueReport, Report } from '../../src/diagnosis/report.js';
import { REPORT_SCHEMA_ID, reportJsonSchema, UNITS } from '../../src/diagnosis/report-schema.js';
import { RULE_IDS } from '../../src/diagnosis/rule.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { expectValid, mixedReport, REPORT_SCHEMA, validateQueueReport, validateReport } from '../server/helpers.js';

const COMMITTED = readFileSync(new URL('../../schemas/report.schema.json', import.meta.url), 'utf8');

/** A deep copy of `value`, as a client would parse it. */
function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

async function withFinding(): Promise<{ report: Report; index: number; queue: QueueReport; finding: Finding }> {
  const report = copy(await mixedReport());
  const index = report.queues.findIndex((q) => q.findings.length > 0);
  const queue = report.queues[index];
  const finding = queue?.findings[0];
  if (queue === undefined || finding === undefined) throw new Error('the mixed report has no finding');
  return { report, index, queue, finding };
}

function replaceQueue(report: Report, index: number, queue: unknown): unknown {
  return { ...report, queues: report.queues.map((q, i) => (i === index ? queue : q)) };
}

describe('the report schema', () => {
  it('is generated: the committed file is what `generate` writes, with the published $id', () => {
    const file = generateArtifacts().find((f) => f.path === OUTPUT.reportSchema);
    expect(file?.content).toBe(COMMITTED);
    expect(JSON.parse(COMMITTED)).toEqual(reportJsonSchema());
    expect(REPORT_SCHEMA.$id).toBe(REPORT_SCHEMA_ID);
    expect(REPORT_SCHEMA.$id).toBe('https://workqueue-doctor/schemas/report.schema.json');
    expect(REPORT_SCHEMA.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(REPORT_SCHEMA.title).toBe('workqueue-doctor diagnosis report');
    expect(REPORT_SCHEMA.description).toMatch(/^The shape of `diagnose --output json` and of GET \/api\/v1\/diagnosis/);
  });

  it('lists every rule id in RULE_IDS order, and every unit', () => {
    const definitions = REPORT_SCHEMA.definitions as Record<string, { enum?: unknown; properties?: unknown }>;
    expect(definitions.ruleId?.enum).toEqual([...RULE_IDS]);
    expect(definitions.value?.properties).toMatchObject({ unit: { enum: [...UNITS] } });
  });

  it('accepts a real report, each of its queues, and a finding without `since` (written before it existed)', async () => {
    const { report, index, queue, finding } = await withFinding();
    expectValid(validateReport, report);
    for (const q of report.queues) expectValid(validateQueueReport, q);
    const { since: _since, ...withoutSince } = finding;
    const older = { ...queue, findings: [withoutSince, ...queue.findings.slice(1)] };
    expectValid(validateReport, replaceQueue(report, index, older));
  });

  it('rejects a finding with a rule id outside RULE_IDS', async () => {
    const { report, index, queue, finding } = await withFinding();
    const wrong = { ...queue, findings: [{ ...finding, rule: 'WorkqueueBaclog' }, ...queue.findings.slice(1)] };
    expect(validateReport(replaceQueue(report, index, wrong))).toBe(false);
    expect(validateQueueReport(wrong)).toBe(false);
  });

  it('rejects a queue without `observations`', async () => {
    const { report, index, queue } = await withFinding();
    const { observations: _dropped, ...without } = queue;
    expect(validateReport(replaceQueue(report, index, without))).toBe(false);
    expect(validateQueueReport(without)).toBe(false);
  });

  it('rejects a value with a unit the schema does not list, in signals and in evidence', async () => {
    const { report, index, queue, finding } = await withFinding();
    const [signal] = Object.keys(queue.signals);
    if (signal === undefined) throw new Error('no signal');
    const badSignals = { ...queue, signals: { ...queue.signals, [signal]: { value: 1, unit: 'seconds' } } };
    expect(validateReport(replaceQueue(report, index, badSignals))).toBe(false);
    const badEvidence = {
      ...queue,
      findings: [{ ...finding, evidence: { x: { value: 1, unit: 'ms' } } }, ...queue.findings.slice(1)],
    };
    expect(validateReport(replaceQueue(report, index, badEvidence))).toBe(false);
    expect(validateQueueReport(badEvidence)).toBe(false);
  });
});
