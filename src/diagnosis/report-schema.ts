/**
 * The report contract, defined once: the shape of `diagnose --output json`, `GET /api/v1/diagnosis` and
 * `GET /api/v1/queues/{id}`. From these TypeBox schemas come the TypeScript types (`report.ts`, `units.ts`),
 * the published JSON Schema `schemas/report.schema.json` (written by `workqueue-doctor generate`) and the
 * API's response schemas (`server/schemas.ts`, and from them the OpenAPI document).
 *
 * Fields may be added; none is renamed or removed. The document is JSON Schema draft-07 with its parts under
 * `definitions` (`#/definitions/queueReport` is the schema of one queue).
 */
import { type Static, type TNumber, type TObject, type TSchema, type TString, Type } from '@sinclair/typebox';
import { OBSERVATION_IDS } from './observation.js';
import { RULE_IDS, SEVERITIES } from './rule.js';

/** Units of signal values. */
export const UNITS = ['s', '1/s', 'items', 'workers', 'ratio'] as const;
/** Why a signal value is null: too few samples in the window, or the metric is not exposed at all. */
export const MISSING_REASONS = ['insufficient_data', 'metric_absent'] as const;
/**
 * A queue's status: `critical` or `warning` from its worst firing finding; `pending` when nothing fires but a
 * condition holds whose `for` has not elapsed; `unknown` when nothing fires or is pending but a rule could not
 * be judged; `ok` only when every rule was judged and none holds; `standby`: a replica that does not lead.
 */
export const QUEUE_STATUSES = ['ok', 'pending', 'warning', 'critical', 'unknown', 'standby'] as const;
/** A finding's state: `firing` once its condition has held for the rule's whole `for`, `pending` before. */
export const FINDING_STATES = ['firing', 'pending'] as const;
/** A queue's `id` in the report and in `/api/v1/queues/{id}`: URL-safe without escaping. */
export const QUEUE_ID_PATTERN = '^[A-Za-z0-9._~-]+$';

/** A string with one of `values`, as `{ "type": "string", "enum": [...] }`. */
export function StringEnum<const T extends readonly string[]>(values: T) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });
}

/** `schema` or null, as `"type": [<type>, "null"]` (keeping the string's format or the number's constraints). */
function Nullable<T extends TString | TNumber>(schema: T) {
  const { type, ...rest } = schema;
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/** An object whose every property is a `value`: `{ "type": "object", "additionalProperties": ... }`. */
function MapOf<T extends TSchema>(schema: T) {
  return Type.Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: schema });
}

const REFERENCED: Array<readonly [DefinitionName, TSchema]> = [];

/** A reference to the entry `name` of the document's `definitions`, typed as `schema` (checked to be that entry). */
function Ref<T extends TSchema>(name: DefinitionName, schema: T) {
  REFERENCED.push([name, schema]);
  return Type.Unsafe<Static<T>>(Type.Ref(`#/definitions/${name}`));
}

/**
 * `schema`, with `keys` left out of `required` in the document: this version always writes them (the type
 * has them), but the published schema has never required them, so documents without them stay valid.
 */
function NotRequired<T extends TObject>(schema: T, keys: readonly (keyof T['properties'] & string)[]): T {
  const required: readonly string[] = schema.required ?? [];
  return { ...schema, required: required.filter((key) => !keys.includes(key)) };
}

export type DefinitionName =
  | 'ruleId'
  | 'observationId'
  | 'value'
  | 'finding'
  | 'observation'
  | 'unknownRule'
  | 'queueReport'
  | 'error';

export const RuleIdSchema = StringEnum(RULE_IDS);
export const ObservationIdSchema = StringEnum(OBSERVATION_IDS);
export const SeveritySchema = StringEnum(SEVERITIES);
export const UnitSchema = StringEnum(UNITS);
export const MissingReasonSchema = StringEnum(MISSING_REASONS);
export const QueueStatusSchema = StringEnum(QUEUE_STATUSES);

/**
 * A measured value. `value` is null when it could not be computed, and `missing` says why;
 * `bound: "ge"` marks a quantile that lies in the +Inf bucket, whose value is then the highest finite bound.
 */
export const SignalValueSchema = Type.Object({
  value: Nullable(Type.Number()),
  unit: UnitSchema,
  bound: Type.Optional(StringEnum(['ge'])),
  missing: Type.Optional(MissingReasonSchema),
});

const Evidence = MapOf(Ref('value', SignalValueSchema));
const Text = Type.String({ minLength: 1 });

export const FindingSchema = NotRequired(
  Type.Object({
    rule: Ref('ruleId', RuleIdSchema),
    severity: SeveritySchema,
    /** When the condition started to hold without interruption (RFC 3339), or null when unknown. */
    since: Nullable(Type.String({ format: 'date-time' })),
    summary: Text,
    evidence: Evidence,
    cause: Text,
    fix: Text,
    runbook: Text,
    state: StringEnum(FINDING_STATES),
    /** For a pending finding: when it fires if the condition keeps holding (RFC 3339). Absent when firing. */
    firesAt: Type.Optional(Type.String({ format: 'date-time' })),
  }),
  ['since', 'state'],
);

export const ObservationSchema = Type.Object(
  {
    id: Ref('observationId', ObservationIdSchema),
    summary: Text,
    evidence: Evidence,
  },
  {
    description:
      'What the metrics suggest but cannot prove; never alerted on, never counted by --fail-on, no effect on status.',
  },
);

export const UnknownRuleSchema = Type.Object(
  {
    rule: Ref('ruleId', RuleIdSchema),
    reason: Text,
  },
  {
    description:
      'A rule that could not be judged at the evaluation time, with why (the data spans less than the rule reads, too few scrapes, series missing).',
  },
);

export const QueueReportSchema = NotRequired(
  Type.Object({
    id: Type.String({ pattern: QUEUE_ID_PATTERN }),
    queue: Type.Object({
      target: Type.String(),
      name: Nullable(Type.String()),
      controller: Nullable(Type.String()),
    }),
    status: QueueStatusSchema,
    findings: Type.Array(Ref('finding', FindingSchema)),
    signals: MapOf(Ref('value', SignalValueSchema)),
    /** Always present; empty for target-level entries. */
    observations: Type.Array(Ref('observation', ObservationSchema)),
    /** Always present: the rules that could not be judged. A queue is `ok` only when this is empty. */
    unknown: Type.Array(Ref('unknownRule', UnknownRuleSchema)),
  }),
  ['unknown'],
);

export const ReportErrorSchema = Type.Object({
  target: Type.String(),
  code: Type.String(),
  message: Type.String(),
});

export const ReportSchema = Type.Object({
  evaluatedAt: Type.String({ format: 'date-time' }),
  window: Type.String({ pattern: '^[0-9]+(ms|s|m|h|d)([0-9]+(ms|s|m|h))*$' }),
  queues: Type.Array(Ref('queueReport', QueueReportSchema)),
  errors: Type.Array(Ref('error', ReportErrorSchema)),
});

const DEFINITIONS: Readonly<Record<DefinitionName, TSchema>> = {
  ruleId: RuleIdSchema,
  observationId: ObservationIdSchema,
  value: SignalValueSchema,
  finding: FindingSchema,
  observation: ObservationSchema,
  unknownRule: UnknownRuleSchema,
  queueReport: QueueReportSchema,
  error: ReportErrorSchema,
};
for (const [name, schema] of REFERENCED) {
  if (DEFINITIONS[name] !== schema)
    throw new Error(`report schema: #/definitions/${name} is not the schema referenced`);
}

export const REPORT_SCHEMA_ID = 'https://workqueue-doctor/schemas/report.schema.json';

export type JsonSchema = Record<string, unknown>;

/** A reference to the report schema, registered by its `$id`, or to one of its `definitions`. */
export function reportSchemaRef(definition?: DefinitionName): { readonly $ref: string } {
  return { $ref: `${REPORT_SCHEMA_ID}#${definition === undefined ? '' : `/definitions/${definition}`}` };
}

/**
 * The report's JSON Schema document, as published in `schemas/report.schema.json` and registered with the
 * API (referenced by `REPORT_SCHEMA_ID`): plain JSON, keys in a fixed order.
 */
export function reportJsonSchema(): JsonSchema {
  return plain({
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: REPORT_SCHEMA_ID,
    title: 'workqueue-doctor diagnosis report',
    description:
      'The shape of `diagnose --output json` and of GET /api/v1/diagnosis. Fields may be added; none may be renamed or removed.',
    ...ReportSchema,
    definitions: DEFINITIONS,
  });
}

/** A copy without TypeBox's symbol-keyed annotations. */
function plain(value: unknown): JsonSchema {
  return JSON.parse(JSON.stringify(value)) as JsonSchema;
}

/** `T` with every property and array read-only, all the way down: the report is never modified once built. */
type Frozen<T> = T extends readonly (infer E)[]
  ? readonly Frozen<E>[]
  : T extends object
    ? { readonly [K in keyof T]: Frozen<T[K]> }
    : T;

export type Unit = (typeof UNITS)[number];
export type MissingReason = (typeof MISSING_REASONS)[number];
export type QueueStatus = (typeof QUEUE_STATUSES)[number];
export type FindingState = (typeof FINDING_STATES)[number];
export type SignalValue = Frozen<Static<typeof SignalValueSchema>>;
export type Finding = Frozen<Static<typeof FindingSchema>>;
export type Observation = Frozen<Static<typeof ObservationSchema>>;
export type UnknownRule = Frozen<Static<typeof UnknownRuleSchema>>;
export type QueueReport = Frozen<Static<typeof QueueReportSchema>>;
export type ReportError = Frozen<Static<typeof ReportErrorSchema>>;
export type Report = Frozen<Static<typeof ReportSchema>>;
