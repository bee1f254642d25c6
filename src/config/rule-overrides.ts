/**
 * The `rules:` section of a configuration file: a user's adjustments to the diagnoses.
 *
 * ```yaml
 * rules:
 *   WorkqueueBacklog:
 *     thresholds: { minDepth: 50 }
 *     for: 15m
 *   WorkqueueSaturated:
 *     disabled: true
 * ```
 *
 * Validated once here, at the edge: an unknown rule or threshold, a value that is not a number or is outside its
 * threshold's range (none below 0; shares at most 1), a `for`
 * that is not a Prometheus duration, each fails with the dotted path of the bad key. The result is the
 * catalog's `RuleOverrides`, trusted from then on.
 */
import { parseDocument } from 'yaml';
import { RULE_BY_ID, type RuleOverride, type RuleOverrides } from '../diagnosis/catalog.js';
import { NON_NEGATIVE, RULE_IDS, type RuleId } from '../diagnosis/rule.js';
import { ParseError, parseDuration } from '../util/duration.js';
import { ConfigError, describeValue } from './config-error.js';

const RULE_KEYS = ['thresholds', 'for', 'disabled'] as const;

/**
 * Parses the value of a `rules:` key. `path` is where that value sits, used as the prefix of every error
 * message (e.g. `workqueue-doctor.yaml: rules`). An absent section (`undefined` or `null`) means no overrides.
 */
export function parseRuleOverrides(value: unknown, path: string): RuleOverrides {
  if (value === undefined || value === null) return {};
  const rules = expectMapping(value, path);
  const out: Partial<Record<RuleId, RuleOverride>> = {};
  for (const [id, body] of Object.entries(rules)) {
    const at = `${path}.${id}`;
    if (!isRuleId(id)) throw new ConfigError(`${at}: unknown rule; known rules: ${RULE_IDS.join(', ')}`);
    out[id] = parseRuleOverride(id, body, at);
  }
  return { rules: out };
}

function parseRuleOverride(id: RuleId, value: unknown, path: string): RuleOverride {
  if (value === null || value === undefined) return {};
  const body = expectMapping(value, path);
  for (const key of Object.keys(body)) {
    if (!(RULE_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`${path}.${key}: unknown key; expected one of ${RULE_KEYS.join(', ')}`);
    }
  }
  let override: RuleOverride = {};
  if (body.thresholds !== undefined && body.thresholds !== null) {
    override = { ...override, thresholds: parseThresholds(id, body.thresholds, `${path}.thresholds`) };
  }
  if (body.for !== undefined) {
    override = { ...override, forMs: parseFor(body.for, `${path}.for`) };
  }
  if (body.disabled !== undefined) {
    if (typeof body.disabled !== 'boolean') {
      throw new ConfigError(`${path}.disabled: expected true or false, got ${describeValue(body.disabled)}`);
    }
    override = { ...override, disabled: body.disabled };
  }
  return override;
}

/** Thresholds an earlier version had, with what replaced them: named in the error instead of "unknown". */
const RETIRED_THRESHOLDS: Partial<Record<RuleId, Record<string, string>>> = {
  WorkqueuePersistentFailures: {
    minRetryRate:
      'retries alone no longer raise WorkqueuePersistentFailures (RequeueAfter polling counts as many); a queue without reconcile error metrics gets the RetriesWithoutErrorMetrics observation instead',
    minRetryShare:
      'retries alone no longer raise WorkqueuePersistentFailures (RequeueAfter polling counts as many); a queue without reconcile error metrics gets the RetriesWithoutErrorMetrics observation instead',
    minErrorRate:
      'the short-window error ratio (minRecentErrorRatio) held at every step of the 15-minute `for` already puts an error in every five minutes, three or more in the long window, above any floor this set; it never decided',
  },
  WorkqueueHotLoop: {
    maxDepth:
      'the depth a loop holds follows its loopers and workers (it keeps the loopers less the workers waiting), not a constant: maxWaitingPerWorker holds the served-first depth to a count per busy worker',
    minErrorRatio:
      "requeued errors without retries prove a loop by their own rate (minAddRate): a loop's adds are its errors, and the real changes beside it, which a share of the adds counted against it, say nothing about the loop",
  },
  WorkqueueBacklog: {
    minWaitRatio:
      'a change is late by the seconds it waits, not by the syncs (minWait): at full busy a key waits as many syncs as keys stand per worker, and the wait in syncs of a full pool below capacity falls with its size (Erlang C), so ten syncs was right for one worker and ten times too many for eight',
    arrivalRatio:
      'a growing depth already proves arrivals above completions: both queues count an add only for a key not already waiting, and the depth moves by the adds less the keys handed out; it never decided',
  },
  WorkqueueSaturated: {
    minRecentUtilization:
      'the long window ends a finding by itself within minutes of a fall of the load (from full busy to a load u, after 12%/(1 − u) of its 15 minutes), 0.55/(1 − u) minutes after a five-minute reading would read under 75%; the short-window test ended it those seconds sooner and decided nothing else',
    maxBusyDrift:
      'without a configured maximum, a depth that never fell to zero over the long window keeps every worker busy all along, so the busy count holds flat by itself; how far it strayed never decided',
    minDepth:
      'utilization alone decides where the maximum is known: a large pool near its capacity holds under one key waiting on average (Erlang C), so the average depth is evidence, not tested; without the maximum, a depth that never fell to zero over the long window (a fact, not a tunable) shows the pool full',
    minWaitRatio:
      'utilization alone decides: the wait per sync at a given utilization falls with the size of the pool (Erlang C: 128 workers 90% busy wait a few percent of a sync), so no fixed ratio tells a saturated pool from a busy one; the wait is evidence, not tested',
  },
  WorkqueueSlowWork: {
    minLongestRunning:
      "a running sync is slow by the same line as a finished one, the work-duration histogram's 10 s bucket (fixed by the metrics: client-go's decades end at it), so the longest-running reading is held to it; a line of its own called a sync slow while it ran and not once it finished, or the reverse",
    minSlowShare:
      'the rate of syncs over 10 s alone decides (minSlowRate: two in a quarter of an hour, still coming); below two syncs a second a share of one in a thousand was a single slow sync in the window, an occasional stall, so the share is shown as evidence, not tested',
  },
  WorkqueueStuckWorker: {
    minAgeGrowth:
      'the age of the longest-running sync alone decides (minAge): a sync that old has aged one second per second all along, so its growth is shown as evidence, not tested',
    minUnfinishedGrowth:
      'the age of the longest-running sync alone decides (minAge): the growth of the unfinished work is shown as evidence (how many workers are stuck), not tested',
  },
};

function parseThresholds(id: RuleId, value: unknown, path: string): Record<string, number> {
  const known = Object.keys(RULE_BY_ID.get(id)?.thresholds ?? {});
  const thresholds = expectMapping(value, path);
  const out: Record<string, number> = {};
  for (const [name, raw] of Object.entries(thresholds)) {
    const at = `${path}.${name}`;
    const retired = RETIRED_THRESHOLDS[id]?.[name];
    if (retired !== undefined) throw new ConfigError(`${at}: no longer a threshold: ${retired}`);
    if (!known.includes(name)) {
      throw new ConfigError(
        known.length === 0
          ? `${at}: unknown threshold; ${id} has no thresholds`
          : `${at}: unknown threshold; ${id} has ${known.join(', ')}`,
      );
    }
    if (typeof raw !== 'number' || !Number.isFinite(raw)) {
      throw new ConfigError(`${at}: expected a finite number, got ${describeValue(raw)}`);
    }
    const spec = RULE_BY_ID.get(id)?.thresholds[name];
    const range = spec?.range ?? NON_NEGATIVE;
    if (raw < range.min || raw > range.max) {
      const bounds = range.max === Number.POSITIVE_INFINITY ? `${range.min} or more` : `${range.min} to ${range.max}`;
      throw new ConfigError(`${at}: ${raw} is outside the values that make sense for it, ${bounds} (${spec?.unit})`);
    }
    out[name] = raw;
  }
  return out;
}

function parseFor(value: unknown, path: string): number {
  if (typeof value !== 'string') {
    throw new ConfigError(`${path}: expected a Prometheus duration such as 10m, got ${describeValue(value)}`);
  }
  try {
    return parseDuration(value);
  } catch (error) {
    if (error instanceof ParseError) throw new ConfigError(`${path}: ${error.message}`);
    throw error;
  }
}

/**
 * Parses the text of a YAML configuration file whose only section is `rules:`. `source` names the file in
 * error messages. Other sections are errors here; a configuration that has more sections parses them itself
 * and hands the `rules` value to `parseRuleOverrides`.
 */
export function parseRuleOverridesFile(text: string, source: string): RuleOverrides {
  const top = parseConfigSections(text, source, ['rules']);
  return parseRuleOverrides(top.rules, `${source}: rules`);
}

/**
 * The top-level mapping of a YAML configuration file whose keys must be among `allowed` (an empty file is
 * an empty mapping). Malformed YAML, a non-mapping and an unknown key are `ConfigError`s naming `source`.
 */
export function parseConfigSections(text: string, source: string, allowed: readonly string[]): Record<string, unknown> {
  const document = parseDocument(text, { prettyErrors: false });
  const firstError = document.errors[0];
  if (firstError !== undefined) throw new ConfigError(`${source}: not valid YAML: ${firstError.message}`);
  const root: unknown = document.toJS();
  if (root === null || root === undefined) return {};
  const top = expectMapping(root, source);
  for (const key of Object.keys(top)) {
    if (!allowed.includes(key))
      throw new ConfigError(`${source}: ${key}: unknown key; expected ${allowed.join(' or ')}`);
  }
  return top;
}

function expectMapping(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${path}: expected a mapping, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

function isRuleId(id: string): id is RuleId {
  return (RULE_IDS as readonly string[]).includes(id);
}
