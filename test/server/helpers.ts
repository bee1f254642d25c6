/** Shared by the server tests: a real report (the `mixed` scenario, diagnosed), the app around it, schema checks. */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { RuleOverrides } from '../../src/diagnosis/catalog.js';
import type { Report } from '../../src/diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { buildApp } from '../../src/server/app.js';
import { rulesView } from '../../src/server/rules-view.js';
import { createServiceMetrics, type ServiceMetrics } from '../../src/service/service-metrics.js';
import type { TargetsView } from '../../src/service/target-status.js';
import { mixedReportAtEnd } from '../support/mixed-report.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const REPORT_SCHEMA = JSON.parse(
  readFileSync(new URL('../../schemas/report.schema.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
ajv.addSchema(REPORT_SCHEMA);
const REPORT_ID = REPORT_SCHEMA.$id as string;

export const validateReport: ValidateFunction = ajv.getSchema(REPORT_ID) as ValidateFunction;
export const validateQueueReport: ValidateFunction = ajv.getSchema(
  `${REPORT_ID}#/definitions/queueReport`,
) as ValidateFunction;

/** Throws with ajv's errors when `value` does not satisfy `validate`. */
export function expectValid(validate: ValidateFunction, value: unknown): void {
  if (!validate(value)) throw new Error(`schema violation: ${ajv.errorsText(validate.errors)}`);
}

let mixed: Promise<Report> | undefined;

/**
 * The `mixed` scenario (healthy, hot loop, backlog, persistent failures, blocking call) run for 30 minutes
 * on virtual time and diagnosed at its end, with `overrides`.
 */
export function mixedReport(overrides: RuleOverrides = {}): Promise<Report> {
  const make = async (): Promise<Report> => {
    const { source, report } = await mixedReportAtEnd(overrides);
    await source.close();
    return report;
  };
  if (Object.keys(overrides).length > 0) return make();
  mixed ??= make();
  return mixed;
}

export const SCRAPE_TARGETS: TargetsView = {
  mode: 'scrape',
  targets: [
    {
      key: 'http://127.0.0.1:8080/metrics',
      url: 'http://127.0.0.1:8080/metrics',
      target: 'static/127.0.0.1:8080',
      labels: { job: 'static', instance: '127.0.0.1:8080' },
      up: true,
      lastScrape: '2026-01-01T00:00:00.000Z',
      lastDurationSeconds: 0.004,
      samples: 420,
      bytes: 51_200,
      consecutiveFailures: 0,
      skippedScrapes: 0,
      lastError: null,
      lastWarning: null,
    },
  ],
};

export type TestApp = { app: FastifyInstance; metrics: ServiceMetrics; setReport(report: Report | undefined): void };

/** The app over a report that the test controls (undefined: before the first evaluation). */
export async function testApp(
  options: { report?: Report; apiToken?: string; overrides?: RuleOverrides; targets?: TargetsView } = {},
): Promise<TestApp> {
  let report = options.report;
  const metrics = createServiceMetrics({ processMetrics: false });
  metrics.read({ report: () => report, targets: () => [{ target: 'static/127.0.0.1:8080', up: true }] });
  const app = await buildApp({
    report: () => report,
    ready: () => report !== undefined,
    targets: () => options.targets ?? SCRAPE_TARGETS,
    rules: rulesView(options.overrides ?? {}, DEFAULT_RUNBOOK_BASE_URL),
    metrics: metrics.registry,
    ...(options.apiToken !== undefined ? { apiToken: options.apiToken } : {}),
    evaluationIntervalMs: 15_000,
    version: '0.0.0-test',
  });
  await app.ready();
  return {
    app,
    metrics,
    setReport(next) {
      report = next;
    },
  };
}

export type ErrorBody = { error: { code: string; message: string } };
