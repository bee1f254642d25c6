/**
 * The API's JSON schemas: the report (built from the TypeBox schemas of `diagnosis/report-schema.ts`, the one
 * contract of `diagnose --output json` and `GET /api/v1/diagnosis`, also published as
 * `schemas/report.schema.json`), the error body, and the shapes of the other routes. Registered with
 * `addSchema` and referenced by `$id`; the OpenAPI document is built from them.
 */
import {
  ObservationIdSchema,
  QUEUE_ID_PATTERN,
  QueueStatusSchema,
  RuleIdSchema,
  reportSchemaRef,
  SeveritySchema,
  StringEnum,
  UNITS,
} from '../diagnosis/report-schema.js';
import { SERIES_SIGNALS } from '../service/queue-series.js';

export { REPORT_SCHEMA_ID, reportJsonSchema } from '../diagnosis/report-schema.js';

/** The report (`Report`) and one of its queues (`QueueReport`), in the registered report schema. */
export const REPORT_REF = reportSchemaRef();
export const QUEUE_REPORT_REF = reportSchemaRef('queueReport');

/** `?status=` and `?rule=`, each repeatable or comma-separated. */
export const DIAGNOSIS_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: {
      type: 'array',
      items: QueueStatusSchema,
      description: 'Only queues with one of these statuses (repeat the parameter or separate with commas).',
    },
    rule: {
      type: 'array',
      items: RuleIdSchema,
      description:
        'Only queues with a finding (firing or pending) of one of these rules (repeat the parameter or separate with commas).',
    },
  },
} as const;

export const QUEUE_PARAMS_SCHEMA = {
  type: 'object',
  required: ['id'],
  properties: {
    id: {
      type: 'string',
      pattern: QUEUE_ID_PATTERN,
      maxLength: 1024,
      description: 'The queue id from the report (`queues[].id`).',
    },
  },
} as const;

const nullableString = { type: 'string', nullable: true } as const;
const nullableNumber = { type: 'number', nullable: true } as const;
const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;
const timedError = {
  type: 'object',
  nullable: true,
  required: ['message', 'at'],
  properties: { message: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
} as const;

export const TARGETS_SCHEMA = {
  $id: 'Targets',
  title: 'Targets',
  description:
    'Scrape mode: every target with its scrape health (and the discovery status with Kubernetes). Prometheus mode: whether the server answers, with its build info.',
  type: 'object',
  required: ['mode'],
  properties: {
    mode: { type: 'string', enum: ['scrape', 'prometheus'] },
    targets: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'url', 'target', 'labels', 'up', 'lastScrape', 'consecutiveFailures', 'lastError'],
        properties: {
          key: { type: 'string' },
          url: { type: 'string' },
          target: { type: 'string', description: '`job/instance`, as in the report.' },
          labels: stringMap,
          up: { type: 'boolean' },
          lastScrape: { ...nullableString, format: 'date-time' },
          lastDurationSeconds: nullableNumber,
          samples: nullableNumber,
          bytes: nullableNumber,
          consecutiveFailures: { type: 'integer' },
          skippedScrapes: { type: 'integer' },
          lastError: {
            type: 'object',
            nullable: true,
            required: ['code', 'message', 'at'],
            properties: {
              code: { type: 'string' },
              message: { type: 'string' },
              at: { type: 'string', format: 'date-time' },
            },
          },
          lastWarning: {
            type: 'object',
            nullable: true,
            description:
              'What a limit did to the last successful scrape, which was stored: e.g. `held_series_limit` when stale series were evicted to stay within the held series limit. Null when none acted on it.',
            required: ['code', 'message', 'at'],
            properties: {
              code: { type: 'string' },
              message: { type: 'string' },
              at: { type: 'string', format: 'date-time' },
            },
          },
        },
      },
    },
    discovery: {
      type: 'object',
      required: ['kind', 'healthy', 'lastSync', 'consecutiveFailures', 'lastError'],
      properties: {
        kind: { type: 'string', enum: ['kubernetes'] },
        healthy: { type: 'boolean' },
        lastSync: { ...nullableString, format: 'date-time' },
        consecutiveFailures: { type: 'integer' },
        lastError: timedError,
      },
    },
    prometheus: {
      type: 'object',
      required: ['url', 'up', 'checkedAt', 'buildInfo', 'lastError'],
      properties: {
        url: { type: 'string' },
        up: { type: 'boolean' },
        checkedAt: { ...nullableString, format: 'date-time' },
        buildInfo: {
          type: 'object',
          nullable: true,
          properties: {
            version: { type: 'string' },
            revision: { type: 'string' },
            branch: { type: 'string' },
            buildUser: { type: 'string' },
            buildDate: { type: 'string' },
            goVersion: { type: 'string' },
          },
        },
        lastError: timedError,
      },
    },
  },
} as const;

const thresholdsSchema = {
  type: 'object',
  additionalProperties: {
    type: 'object',
    required: ['value', 'default', 'unit', 'description'],
    properties: {
      value: { type: 'number', description: 'In force.' },
      default: { type: 'number' },
      unit: StringEnum([...UNITS, 'count']),
      description: { type: 'string' },
    },
  },
} as const;

const observationViewSchema = {
  type: 'object',
  required: ['id', 'title', 'for', 'thresholds', 'expr', 'supersededBy', 'meaning'],
  properties: {
    id: ObservationIdSchema,
    title: { type: 'string' },
    for: { type: 'string', description: 'How long the condition must hold (Prometheus duration).' },
    thresholds: thresholdsSchema,
    expr: { type: 'string', description: 'The condition (PromQL), for running by hand; no alert carries it.' },
    supersededBy: {
      type: 'array',
      items: RuleIdSchema,
      description: 'Rules whose finding on a queue replaces the observation there.',
    },
    meaning: { type: 'string' },
  },
} as const;

const ruleViewSchema = {
  type: 'object',
  required: ['id', 'title', 'severity', 'scope', 'enabled', 'for', 'thresholds', 'expr', 'meaning', 'runbook'],
  properties: {
    id: RuleIdSchema,
    title: { type: 'string' },
    severity: SeveritySchema,
    scope: { type: 'string', enum: ['queue', 'target'] },
    enabled: { type: 'boolean' },
    for: { type: 'string', description: 'How long the condition must hold (Prometheus duration).' },
    thresholds: thresholdsSchema,
    expr: { type: 'string', description: 'The alert expression (PromQL) with the thresholds in force.' },
    meaning: { type: 'string' },
    runbook: { type: 'string' },
  },
} as const;

export const RULES_SCHEMA = {
  $id: 'Rules',
  title: 'Rules',
  description:
    'The diagnosis catalog with the thresholds in force, and the queue-specific overrides; then the observations, which are reported with the queues but never alerted on.',
  type: 'object',
  required: ['rules', 'queueOverrides', 'observations'],
  properties: {
    rules: { type: 'array', items: ruleViewSchema },
    queueOverrides: {
      type: 'array',
      items: {
        type: 'object',
        required: ['match', 'silenced', 'rules'],
        properties: {
          match: {
            type: 'object',
            required: ['name', 'controller'],
            properties: { name: nullableString, controller: nullableString },
          },
          silenced: { type: 'boolean' },
          rules: {
            type: 'array',
            items: ruleViewSchema,
            description: 'Rules whose settings differ for the matched queues, with the settings in force there.',
          },
        },
      },
    },
    observations: { type: 'array', items: observationViewSchema },
  },
} as const;

/** `?signals=` of the series route, repeatable or comma-separated. */
export const SERIES_QUERY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    signals: {
      type: 'array',
      items: { type: 'string', enum: [...SERIES_SIGNALS] },
      description: 'Only these signals (repeat the parameter or separate with commas); default all.',
    },
  },
} as const;

export const SERIES_SCHEMA = {
  $id: 'QueueSeries',
  title: 'QueueSeries',
  description:
    'Chart signals of one queue at evenly spaced times over the chart window, ending at the evaluation time of ' +
    'the latest report. A value is null where the signal had no sample.',
  type: 'object',
  required: ['id', 'evaluatedAt', 'stepSeconds', 'times', 'series'],
  properties: {
    id: { type: 'string' },
    evaluatedAt: { type: 'string', format: 'date-time' },
    stepSeconds: { type: 'number' },
    times: { type: 'array', items: { type: 'number' }, description: 'Unix seconds, ascending.' },
    series: {
      type: 'object',
      description: 'By signal id.',
      additionalProperties: {
        type: 'object',
        required: ['title', 'unit', 'values'],
        properties: {
          title: { type: 'string' },
          unit: { type: 'string', enum: [...UNITS] },
          values: { type: 'array', items: nullableNumber },
        },
      },
    },
  },
} as const;

export const HEALTH_SCHEMA = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok', 'ready'] } },
} as const;

export const METRICS_SCHEMA = {
  type: 'string',
  description: 'Prometheus text exposition format 0.0.4.',
} as const;
