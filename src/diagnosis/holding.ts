/**
 * When conditions hold: at every step of a `for` (as a Prometheus alert's pending state), and since when
 * (traced back step by step, or carried over from the previous evaluation of the same source).
 */
import type { Expr } from '../promql/expr.js';
import type { Labels } from '../promql/vector.js';
import type { DiagnosisBackend } from './backend.js';
import type { RuleSettings } from './catalog.js';
import type { ObservationSettings } from './observation.js';
import { conditionWith } from './rule.js';
import { SIGNAL_WINDOW_MS } from './signals.js';

/** How far back `since` is traced. */
export const SINCE_LOOKBACK_MS = 60 * 60_000;

/** The settings of a rule or of an observation: a condition with the thresholds in force, and its `for`. */
export type ConditionSettings = RuleSettings | ObservationSettings;

function conditionOf(settings: ConditionSettings): Expr {
  return 'rule' in settings
    ? conditionWith(settings.rule, settings.thresholds)
    : conditionWith(settings.observation, settings.thresholds);
}

/**
 * The series keys the condition holds for at every step of the `for` duration ending at `at`, the first
 * of those steps, and the condition (for tracing further back).
 */
export async function holding(
  backend: DiagnosisBackend,
  settings: ConditionSettings,
  at: number,
  step: number,
  historyStartMs: number | undefined,
  keyOf: (labels: Labels) => string,
): Promise<{ keys: Set<string>; from: number; condition: Expr }> {
  const condition = conditionOf(settings);
  let forMs = settings.forMs;
  if (historyStartMs !== undefined) {
    // Shorten `for` to the history there is, keeping at least one step.
    const available = Math.max(0, at - historyStartMs - SIGNAL_WINDOW_MS);
    forMs = Math.min(forMs, Math.floor(available / step) * step);
  }
  const forSteps = Math.floor(forMs / step);
  const times = stepTimes(at, step, forSteps);
  const vectors = await backend.evaluate(condition, times);
  let keys: Set<string> | undefined;
  for (const vector of vectors) {
    const these = new Set(vector.map((s) => keyOf(s.labels)));
    keys = keys === undefined ? these : new Set([...keys].filter((k) => these.has(k)));
  }
  return { keys: keys ?? new Set(), from: times[0] ?? at, condition };
}

/**
 * What a caller that diagnoses the same source again and again (the service) keeps between evaluations: for
 * each condition (its id, thresholds and `for`) and series key that held at an evaluation, the time it had
 * held since and that evaluation's time.
 */
export type SinceMemory = Map<string, { readonly sinceMs: number; readonly atMs: number }>;

/**
 * For every series key the condition holds for at every step of the `for` duration ending at `at`,
 * the time it has held since (tracing back up to SINCE_LOOKBACK_MS).
 *
 * With a `memory`: a key that held at a remembered evaluation whose time falls within this evaluation's `for`
 * steps held throughout (the two `for` checks overlap), so it keeps the remembered `since` (no earlier than
 * the lookback allows) instead of being traced back again. The memory is updated: the keys holding now are
 * remembered with this evaluation's time, those of this condition that no longer hold are forgotten.
 */
export async function holdingSince(
  backend: DiagnosisBackend,
  settings: ConditionSettings,
  at: number,
  step: number,
  historyStartMs: number | undefined,
  keyOf: (labels: Labels) => string,
  memory?: SinceMemory,
): Promise<Map<string, number>> {
  const { keys, from, condition } = await holding(backend, settings, at, step, historyStartMs, keyOf);
  const floor = Math.max(at - SINCE_LOOKBACK_MS, historyStartMs ?? Number.NEGATIVE_INFINITY);
  const prefix = memory === undefined ? '' : memoryPrefix(settings);
  const since = new Map<string, number>();
  let alive = new Set<string>();
  for (const key of keys) {
    const remembered = memory?.get(prefix + key);
    if (remembered !== undefined && remembered.atMs >= from && remembered.atMs <= at) {
      since.set(key, Math.max(remembered.sinceMs, floorStep(from, step, floor)));
    } else {
      since.set(key, from);
      alive.add(key);
    }
  }
  // Trace back, a chunk at a time, while some key still holds.
  let earliest = from;
  const chunk = 20;
  while (alive.size > 0 && earliest - step >= floor) {
    const count = Math.min(chunk, Math.floor((earliest - floor) / step));
    if (count <= 0) break;
    const older = stepTimes(earliest - step, step, count - 1);
    const olderVectors = await backend.evaluate(condition, older);
    for (let i = olderVectors.length - 1; i >= 0 && alive.size > 0; i--) {
      const keys = new Set((olderVectors[i] ?? []).map((s) => keyOf(s.labels)));
      const t = older[i] ?? earliest;
      const next = new Set<string>();
      for (const key of alive) {
        if (keys.has(key)) {
          since.set(key, t);
          next.add(key);
        }
      }
      alive = next;
    }
    earliest = older[0] ?? earliest;
  }
  if (memory !== undefined) remember(memory, prefix, since, at);
  return since;
}

/** The earliest `for` step at or after `floor`, on the grid of steps ending at `from`. */
function floorStep(from: number, step: number, floor: number): number {
  if (!(floor > Number.NEGATIVE_INFINITY)) return Number.NEGATIVE_INFINITY;
  return from - Math.floor((from - floor) / step) * step;
}

function memoryPrefix(settings: ConditionSettings): string {
  const id = 'rule' in settings ? settings.rule.id : settings.observation.id;
  return `${id}\u0000${JSON.stringify(settings.thresholds)}\u0000${settings.forMs}\u0000`;
}

function remember(memory: SinceMemory, prefix: string, since: ReadonlyMap<string, number>, at: number): void {
  for (const key of memory.keys())
    if (key.startsWith(prefix) && !since.has(key.slice(prefix.length))) memory.delete(key);
  for (const [key, sinceMs] of since) memory.set(prefix + key, { sinceMs, atMs: at });
}

/** `count + 1` times ending at `end`, `step` apart, ascending. */
export function stepTimes(end: number, step: number, count: number): number[] {
  const times: number[] = [];
  for (let i = count; i >= 0; i--) times.push(end - i * step);
  return times;
}
