/**
 * The JSON Schema of the configuration file every command reads (`--config`; documented in
 * `deploy/config-example.yaml`), derived from the settings table (config/service-settings.ts) and the diagnosis
 * catalog (rule ids, thresholds and their ranges). The Helm chart checks its `config:` value against it, so a
 * wrong key or type fails `helm install` instead of the pod's start.
 *
 * Contract:
 * - Every key the file may hold is a property, nested by its dotted path; any other key is refused, as the loader
 *   refuses it. `omit` leaves out keys a caller sets itself (they are then refused too).
 * - Each kind of setting accepts the YAML types a file would give it: strings of the right shape, numbers in
 *   range, booleans, lists. A few spellings the loader also reads (a boolean as the string "true", an integer as a
 *   string of digits) are refused here: a values file has the native type at hand.
 * - Null is accepted where the loader reads it as absent: a setting (but the enumerations, log level and scheme) or a
 *   section of settings (one holding only comments), `rules`, a rule's body and its `thresholds`, `queues`, and an
 *   entry's name, controller and rules.
 * - What the loader checks across keys (one source of metrics, the scrape timeout below the interval, a duration's
 *   range) stays with the loader, which the service runs at start; the descriptions name the ranges.
 */

import { flagName, SETTINGS, type Setting, type SourceKind } from '../../config/service-settings.js';
import { LOG_LEVELS, type SettingKind } from '../../config/setting-values.js';
import { RULES } from '../../diagnosis/catalog.js';
import type { DiagnosisRule } from '../../diagnosis/rule.js';
import { PROMETHEUS_ENGINES } from '../../prometheus/prometheus-backend.js';
import { RECORDED_SERIES_MODES } from '../../prometheus/recorded-series.js';
import type { JsonSchema } from './values-tree.js';

/** A Prometheus duration: `<integer><unit>` parts from the largest unit to the smallest, or `0` (util/duration.ts). */
const DURATION: JsonSchema = {
  type: 'string',
  minLength: 1,
  pattern: '^(0|([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$',
};

const STRING_LIST: JsonSchema = { type: ['array', 'string'], items: { type: 'string' } };

/** The schema of one kind of setting, with what it reads as. */
const KIND_SCHEMA: Readonly<Record<SettingKind, { readonly schema: JsonSchema; readonly reads: string }>> = {
  string: { schema: { type: 'string', minLength: 1 }, reads: 'A string.' },
  duration: { schema: DURATION, reads: 'A Prometheus duration (30s, 5m, 1h30m).' },
  boolean: { schema: { type: 'boolean' }, reads: 'true or false.' },
  list: { schema: STRING_LIST, reads: 'A list of strings (or one comma-separated string).' },
  urls: { schema: STRING_LIST, reads: 'A list of http or https URLs.' },
  integer: { schema: { type: 'integer', minimum: 1 }, reads: 'A whole number, 1 or more.' },
  port: { schema: { type: 'integer', minimum: 1, maximum: 65_535 }, reads: 'A port, 1 to 65535.' },
  url: { schema: { type: 'string', pattern: '^https?://.' }, reads: 'An http or https URL.' },
  listen: { schema: { type: 'string', pattern: '^.*:[0-9]{1,5}$' }, reads: 'host:port.' },
  logLevel: { schema: { enum: [...LOG_LEVELS] }, reads: `One of ${LOG_LEVELS.join(', ')}.` },
  headers: {
    schema: {
      type: ['object', 'array'],
      additionalProperties: { type: 'string' },
      items: { type: 'string', pattern: '^[^:]+:' },
    },
    reads: 'Header names to values (or a list of "Name: value").',
  },
  scheme: { schema: { enum: ['http', 'https'] }, reads: 'http or https.' },
  prometheusEngine: {
    schema: { enum: [...PROMETHEUS_ENGINES] },
    reads: `One of ${PROMETHEUS_ENGINES.join(', ')}.`,
  },
  recordedSeriesMode: {
    schema: { enum: [...RECORDED_SERIES_MODES] },
    reads: `One of ${RECORDED_SERIES_MODES.join(', ')}.`,
  },
  selector: { schema: { type: 'string', minLength: 1 }, reads: `Label matchers such as 'job=~"my-operator.*"'.` },
  labelName: { schema: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, reads: 'A label name.' },
  memory: {
    schema: {
      type: ['string', 'integer'],
      minimum: 1,
      pattern: '^(max|[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?)$',
    },
    reads: 'A size such as 192Mi or 1Gi, bytes, or max.',
  },
};

const SOURCE_WORDS: Readonly<Record<SourceKind, string>> = {
  targets: 'static targets',
  kubernetes: 'Kubernetes discovery',
  prometheus: 'Prometheus mode',
  demo: 'the demo',
};

/** The schema also accepting null; an enumeration stays as it is, so that errors list its values only. */
function nullable(schema: JsonSchema): JsonSchema {
  const type = schema['type'];
  if (type === undefined) return schema;
  return { ...schema, type: [...(Array.isArray(type) ? type : [type]), 'null'] };
}

function settingSchema(setting: Setting): JsonSchema {
  const { schema, reads } = KIND_SCHEMA[setting.kind];
  const words = [reads];
  if (setting.range !== undefined) words.push(`From ${setting.range.min} to ${setting.range.max}.`);
  if (setting.sources !== undefined) {
    words.push(`serve reads it with ${setting.sources.map((s) => SOURCE_WORDS[s]).join(', ')} only.`);
  }
  const also = [setting.flag !== undefined ? flagName(setting.flag) : undefined, setting.env].filter(
    (x) => x !== undefined,
  );
  if (also.length > 0) words.push(`Also ${also.join(', ')}.`);
  return { description: words.join(' '), ...nullable(schema) };
}

type MutableObjectSchema = { type: string[]; additionalProperties: false; properties: Record<string, JsonSchema> };

/** A mapping of exactly these properties, or null (read as an empty one). */
function objectSchema(properties: Record<string, JsonSchema> = {}): MutableObjectSchema {
  return { type: ['object', 'null'], additionalProperties: false, properties };
}

/** One rule's override: its thresholds (by name, within their ranges), `for` and `disabled`. */
function ruleOverrideSchema(rule: DiagnosisRule): JsonSchema {
  const thresholds = Object.fromEntries(
    Object.entries(rule.thresholds).map(([name, spec]) => {
      const range = spec.range ?? { min: 0, max: Number.POSITIVE_INFINITY };
      return [
        name,
        {
          description: `${spec.description} (${spec.unit}; default ${spec.default})`,
          type: 'number',
          minimum: range.min,
          ...(Number.isFinite(range.max) ? { maximum: range.max } : {}),
        },
      ];
    }),
  );
  return {
    description: `Overrides of ${rule.id}.`,
    ...objectSchema({
      thresholds: { description: `The thresholds of ${rule.id}.`, ...objectSchema(thresholds) },
      for: { description: 'How long the condition must hold.', ...DURATION },
      disabled: { description: 'Turns the rule off.', type: 'boolean' },
    }),
  };
}

/** The `rules:` section: overrides by rule id (config/rule-overrides.ts). */
export function rulesSchema(): JsonSchema {
  return {
    description: 'Overrides by rule id.',
    ...objectSchema(Object.fromEntries(RULES.map((rule) => [rule.id, ruleOverrideSchema(rule)]))),
  };
}

/** The `queues:` section: entries matched by name and/or controller (config/queue-overrides.ts). */
export function queuesSchema(): JsonSchema {
  const label = { type: ['string', 'null'], minLength: 1 };
  return {
    description: 'Overrides and silences of some queues, matched by their name and/or controller label; later win.',
    type: ['array', 'null'],
    items: {
      ...objectSchema({
        name: { description: "The queue's name label.", ...label },
        controller: { description: "The queue's controller label.", ...label },
        silenced: { description: 'No finding is reported for the queue.', type: 'boolean' },
        rules: rulesSchema(),
      }),
      type: 'object',
      anyOf: ['name', 'controller'].map((key) => ({ required: [key], properties: { [key]: { type: 'string' } } })),
    },
  };
}

/** The schema of the whole file, without the settings keyed in `omit` (dotted keys). */
export function configFileSchema(omit: readonly string[] = []): JsonSchema {
  const root = { ...objectSchema(), type: ['object'] };
  for (const setting of SETTINGS) {
    if (setting.flagOnly === true || omit.includes(setting.key)) continue;
    const parts = setting.key.split('.');
    let at = root;
    for (const part of parts.slice(0, -1)) {
      const existing = at.properties[part] as MutableObjectSchema | undefined;
      const next = existing ?? objectSchema();
      at.properties[part] = next;
      at = next;
    }
    at.properties[parts.at(-1) as string] = settingSchema(setting);
  }
  root.properties['rules'] = rulesSchema();
  root.properties['queues'] = queuesSchema();
  return root;
}
