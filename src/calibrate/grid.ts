/** The calibration grid file: a JSON list of cases, validated with the offending entry named. */
import { RULE_IDS, type RuleId } from '../diagnosis/rule.js';
import {
  BACKGROUND_MODES,
  type BackgroundMode,
  FLAVORS,
  type Flavor,
  QUEUE_KINDS,
  type QueueKind,
} from '../simulate/index.js';
import type { CalibrationCase } from './run.js';

/** A malformed grid file; the message names the file and the entry. */
export class GridError extends Error {
  override readonly name = 'GridError';
}

const NUMBER_FIELDS = [
  'seed',
  'workers',
  'keys',
  'rate',
  'durationMs',
  'failingKeys',
  'invalidKeys',
  'pollingKeys',
  'backoffBaseMs',
  'loopKeys',
  'writesPerSync',
  'listWrites',
  'statusAtMs',
  'transientShare',
  'outageSeconds',
  'spikeSeconds',
  'batchSize',
  'relistAtSeconds',
  'blockingShare',
  'blockingSeconds',
  'syncMs',
  'scrapeIntervalMs',
] as const;

export function parseCalibrationGrid(text: string, file: string): CalibrationCase[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new GridError(`${file}: not JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { cases?: unknown })?.cases;
  if (!Array.isArray(list)) throw new GridError(`${file}: expected a list of cases (or {"cases": [...]})`);
  return list.map((entry, index) => {
    const where = `${file}: case ${index}`;
    if (typeof entry !== 'object' || entry === null) throw new GridError(`${where}: not an object`);
    const record = entry as Record<string, unknown>;
    if (typeof record.scenario !== 'string') throw new GridError(`${where}: "scenario" must be a string`);
    const out: Record<string, unknown> = { scenario: record.scenario };
    for (const field of NUMBER_FIELDS) {
      const value = record[field];
      if (value === undefined) continue;
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new GridError(`${where}: "${field}" must be a number`);
      out[field] = value;
    }
    if (record.flavor !== undefined) {
      if (!FLAVORS.includes(record.flavor as Flavor))
        throw new GridError(`${where}: "flavor" must be one of ${FLAVORS.join(', ')}`);
      out.flavor = record.flavor;
    }
    if (record.queue !== undefined) {
      if (!QUEUE_KINDS.includes(record.queue as QueueKind))
        throw new GridError(`${where}: "queue" must be one of ${QUEUE_KINDS.join(', ')}`);
      out.queue = record.queue;
    }
    if (record.background !== undefined) {
      if (!BACKGROUND_MODES.includes(record.background as BackgroundMode))
        throw new GridError(`${where}: "background" must be one of ${BACKGROUND_MODES.join(', ')}`);
      out.background = record.background;
    }
    if (record.forbids !== undefined && !isRuleList(record.forbids))
      throw new GridError(`${where}: "forbids" must be a list of rule ids (${RULE_IDS.join(', ')})`);
    for (const key of Object.keys(record)) {
      if (
        key !== 'forbids' &&
        key !== 'scenario' &&
        key !== 'flavor' &&
        key !== 'background' &&
        key !== 'queue' &&
        !(NUMBER_FIELDS as readonly string[]).includes(key) &&
        key !== 'note'
      ) {
        throw new GridError(`${where}: unknown field "${key}"`);
      }
    }
    return out as CalibrationCase;
  });
}

/** A list of rule ids: what a near-miss case of a grid forbids at some step (`forbids`), checked by its tests. */
function isRuleList(value: unknown): value is RuleId[] {
  return Array.isArray(value) && value.every((id) => RULE_IDS.includes(id as RuleId));
}
