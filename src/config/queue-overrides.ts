/**
 * The `queues:` section of a configuration file: thresholds for some queues only, and silenced queues.
 *
 * ```yaml
 * queues:
 *   - name: pod                      # the queue's `name` label; omitted: any name
 *     controller: pod                # the queue's `controller` label; omitted: any controller
 *     rules:
 *       WorkqueueBacklog: { thresholds: { minDepth: 200 }, for: 20m }
 *   - name: legacy-sync
 *     silenced: true                 # no finding is reported for this queue
 * ```
 *
 * Entries apply in order after the rule-wide `rules:` section (later entries win). Each entry needs a
 * `name` or a `controller`, so one typo cannot silence every queue. The rule bodies are read by
 * `parseRuleOverrides`, with the same checks and messages.
 */
import type { QueueOverride, RuleOverrides } from '../diagnosis/catalog.js';
import { ConfigError, describeValue } from './config-error.js';
import { parseConfigSections, parseRuleOverrides } from './rule-overrides.js';

const ENTRY_KEYS = ['name', 'controller', 'silenced', 'rules'] as const;

/** Parses the value of a `queues:` key; `path` prefixes every error message (e.g. `config.yaml: queues`). */
export function parseQueueOverrides(value: unknown, path: string): QueueOverride[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw new ConfigError(`${path}: expected a list of queue entries, got ${describeValue(value)}`);
  return value.map((entry, index) => parseEntry(entry, `${path}[${index}]`));
}

/** The `rules:` and `queues:` sections of one configuration mapping, as the catalog's overrides. */
export function parseOverrideSections(rules: unknown, queues: unknown, source: string): RuleOverrides {
  const ruleWide = parseRuleOverrides(rules, `${source}rules`);
  const perQueue = parseQueueOverrides(queues, `${source}queues`);
  return {
    ...(ruleWide.rules !== undefined ? { rules: ruleWide.rules } : {}),
    ...(perQueue.length > 0 ? { queues: perQueue } : {}),
  };
}

/** A YAML file with the `rules:` and `queues:` sections (`diagnose --config`); `source` names it in errors. */
export function parseOverridesFile(text: string, source: string): RuleOverrides {
  const top = parseConfigSections(text, source, ['rules', 'queues']);
  return parseOverrideSections(top.rules, top.queues, `${source}: `);
}

function parseEntry(value: unknown, path: string): QueueOverride {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(
      `${path}: expected a mapping with name, controller, silenced or rules, got ${describeValue(value)}`,
    );
  }
  const body = value as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!(ENTRY_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`${path}.${key}: unknown key; expected one of ${ENTRY_KEYS.join(', ')}`);
    }
  }
  const name = optionalLabel(body.name, `${path}.name`);
  const controller = optionalLabel(body.controller, `${path}.controller`);
  if (name === undefined && controller === undefined) {
    throw new ConfigError(
      `${path}: give a name or a controller to match (an entry without either would match every queue)`,
    );
  }
  if (body.silenced !== undefined && typeof body.silenced !== 'boolean') {
    throw new ConfigError(`${path}.silenced: expected true or false, got ${describeValue(body.silenced)}`);
  }
  const rules = parseRuleOverrides(body.rules, `${path}.rules`).rules;
  return {
    ...(name !== undefined ? { name } : {}),
    ...(controller !== undefined ? { controller } : {}),
    ...(body.silenced !== undefined ? { silenced: body.silenced as boolean } : {}),
    ...(rules !== undefined ? { rules } : {}),
  };
}

function optionalLabel(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw new ConfigError(`${path}: expected a non-empty string (a label value), got ${describeValue(value)}`);
  }
  return value;
}
