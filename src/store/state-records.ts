/**
 * The header and the series records of a state file's content (state-file.ts), checked as a scrape's series are
 * before anything of them is kept: label names as Prometheus writes them, at most `limits.labelLimit` labels of
 * at most `limits.labelValueLimit` characters besides the target's (a target's own: at most `MAX_TARGET_LABELS`
 * of `TARGET_LABEL_VALUE_LIMIT`), a well-formed series key, a sample count the content can hold.
 *
 * Contract: `targetsOf(header)` gives the targets' label sets; `seriesHeadOf(record, ...)` a series' target, key,
 * labels and sample count. A malformed value is a `StateFileError` `damaged`, one beyond a limit `limits`, each
 * naming the setting that raises the limit.
 */
import type { Labels } from '../exposition/labels.js';
import { StateFileError } from './state-file-error.js';
import {
  BYTES_PER_SAMPLE,
  MAX_TARGET_LABELS,
  type StateFileLimits,
  TARGET_LABEL_VALUE_LIMIT,
} from './state-file-limits.js';

export type SeriesHead = {
  readonly target: number;
  readonly key: string;
  /** Its target's labels included, as the history holds them. */
  readonly labels: Labels;
  readonly samples: number;
};

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** A label of a series key as `seriesKey` writes it: `name="value"`, with `\\`, `\"` and `\n` the only escapes. */
const KEY_LABEL = String.raw`[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"`;
const SERIES_KEY = new RegExp(String.raw`^[a-zA-Z_:][a-zA-Z0-9_:]*(?:\{${KEY_LABEL}(?:,${KEY_LABEL})*\})?$`);

export function targetsOf(header: Record<string, unknown>): Labels[] {
  const list = header['targets'];
  if (!Array.isArray(list)) throw damaged('malformed header');
  return list.map((target: unknown, i) => {
    const labels = isRecord(target) ? target['labels'] : undefined;
    const what = `target ${i}`;
    if (!isLabels(labels)) throw damaged(`malformed labels of ${what}`);
    const names = Object.keys(labels);
    if (names.length > MAX_TARGET_LABELS) throw overLimit(`${what} has more than ${MAX_TARGET_LABELS} labels`);
    checkLabels(names, labels, what, TARGET_LABEL_VALUE_LIMIT, 'the limit of a target label');
    return labels;
  });
}

export function seriesHeadOf(
  record: Record<string, unknown>,
  index: number,
  targets: readonly Labels[],
  limits: StateFileLimits,
): SeriesHead {
  const what = `series ${index}`;
  const { target, key, labels, samples } = record;
  if (
    !(Number.isInteger(target) && (target as number) >= 0 && (target as number) < targets.length) ||
    typeof key !== 'string' ||
    !SERIES_KEY.test(key) ||
    !isLabels(labels) ||
    !(Number.isInteger(samples) && (samples as number) > 0)
  ) {
    throw damaged(`malformed record of ${what}`);
  }
  if ((samples as number) * BYTES_PER_SAMPLE > limits.maxContentBytes) {
    throw overLimit(`${what} has more samples than the file may hold`);
  }
  const targetLabels = targets[target as number] as Labels;
  // The labels its target gave it are the target's, checked with the target.
  const own = Object.keys(labels).filter((name) => targetLabels[name] !== labels[name]);
  if (own.length > limits.labelLimit) {
    throw overLimit(`${what} has more than ${limits.labelLimit} labels besides its target's (scrape.labelLimit)`);
  }
  checkLabels(own, labels, what, limits.labelValueLimit, 'scrape.labelValueLimit');
  // As the parser counts it: the names and values inside the braces (a record holds no metric name).
  const setLength = own.reduce((sum, name) => sum + name.length + (labels[name] as string).length, 0);
  if (setLength > limits.labelSetLengthLimit) {
    throw overLimit(
      `the labels of ${what} are longer than ${limits.labelSetLengthLimit} characters together (scrape.labelSetLengthLimit)`,
    );
  }
  return { target: target as number, key, labels, samples: samples as number };
}

function checkLabels(names: readonly string[], labels: Labels, what: string, limit: number, setting: string): void {
  for (const name of names) {
    if (!LABEL_NAME.test(name)) throw damaged(`a label name of ${what} is malformed`);
    const value = labels[name] as string;
    if (name.length > limit || value.length > limit) {
      throw overLimit(`the ${name.slice(0, 64)} label of ${what} is longer than ${limit} characters (${setting})`);
    }
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLabels(value: unknown): value is Labels {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}

const damaged = (message: string): StateFileError => new StateFileError('damaged', message);
const overLimit = (message: string): StateFileError => new StateFileError('limits', message);
