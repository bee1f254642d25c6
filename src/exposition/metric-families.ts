/**
 * Metric families while a page is parsed: which types each format declares, which sample-name
 * suffixes each type allows, and `FamilyRegistry`, the families met so far.
 *
 * Contract:
 * - A family is created untyped the first time a HELP/TYPE/UNIT line or a sample names it, and asks
 *   `keep` once, then: kept families get consecutive indexes in order of first appearance, others -1.
 * - A sample name belongs to an existing family when it is the family name, or the family name plus a
 *   suffix its type allows (`_bucket`, `_sum`, `_count`, `_created`, `_total`, `_info`, `_gsum`,
 *   `_gcount`); otherwise a new untyped family named after the sample is made, kept when `keep`
 *   accepts its name or that name without the suffix.
 * - `FamilyState` carries the unfinished key hashes (FNV state, see series-index.ts) of the family
 *   name alone and plus each allowed suffix, so that the parser can hash a sample name it has matched
 *   against the family without reading it again. `setFamilyType` keeps them in step with the type.
 */
import type { MetricFamily, MetricType } from './parsed-page.js';
import { HASH_PRIME, HASH_SEED } from './series-index.js';

const SUFFIXES: Readonly<Record<MetricType, readonly string[]>> = {
  counter: ['_total', '_created'],
  histogram: ['_bucket', '_sum', '_count', '_created'],
  gaugehistogram: ['_bucket', '_gsum', '_gcount'],
  summary: ['_sum', '_count', '_created'],
  info: ['_info'],
  gauge: [],
  untyped: [],
  unknown: [],
  stateset: [],
};
const ALL_SUFFIXES = ['_bucket', '_sum', '_count', '_created', '_total', '_info', '_gsum', '_gcount'];

/** The types a `# TYPE` line may give in the text format 0.0.4. */
export const TEXT_TYPES: ReadonlySet<string> = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
/** The types a `# TYPE` line may give in OpenMetrics 1.0. */
export const OPENMETRICS_TYPES: ReadonlySet<string> = new Set<string>([
  'counter',
  'gauge',
  'histogram',
  'summary',
  'unknown',
  'info',
  'stateset',
  'gaugehistogram',
]);

export interface FamilyState {
  readonly name: string;
  type: MetricType;
  /** A `# TYPE` line gave the type. */
  typed: boolean;
  help: string | undefined;
  unit: string | undefined;
  suffixes: readonly string[];
  /** Unfinished key hashes (FNV state) of the name alone and of the name plus each suffix. */
  readonly nameHash: number;
  suffixHashes: number[];
  readonly keep: boolean;
  /** Index in the output families, -1 when not kept. */
  readonly index: number;
}

/** FNV state after `text` (without the final avalanche). */
function hashState(text: string): number {
  let h = HASH_SEED;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), HASH_PRIME);
  return h;
}

/** Gives `f` the type a `# TYPE` line declared, with the suffixes that type allows. */
export function setFamilyType(f: FamilyState, type: MetricType): void {
  f.type = type;
  f.typed = true;
  const suffixes = SUFFIXES[type];
  f.suffixes = suffixes;
  f.suffixHashes = suffixes.map((sfx) => hashState(f.name + sfx));
}

export class FamilyRegistry {
  readonly #keep: ((family: string) => boolean) | undefined;
  readonly #byName = new Map<string, FamilyState>();
  readonly #kept: FamilyState[] = [];

  constructor(keep: ((family: string) => boolean) | undefined) {
    this.#keep = keep;
  }

  /** The family a HELP/TYPE/UNIT line names, made when new. */
  named(name: string): FamilyState {
    let f = this.#byName.get(name);
    if (f === undefined) f = this.#newFamily(name, name);
    return f;
  }

  /** The family of a sample named `name`: an earlier family it belongs to, or a new untyped one. */
  ofSample(name: string): FamilyState {
    let f = this.#byName.get(name);
    if (f === undefined) {
      let base = name;
      for (const s of ALL_SUFFIXES) {
        if (name.length > s.length && name.endsWith(s)) {
          const candidate = name.slice(0, name.length - s.length);
          const g = this.#byName.get(candidate);
          if (g?.suffixes.includes(s)) {
            f = g;
            break;
          }
          if (base === name) base = candidate;
        }
      }
      f ??= this.#newFamily(name, base);
    }
    return f;
  }

  /** The kept families, in order of first appearance, as the parsed page lists them. */
  keptFamilies(): MetricFamily[] {
    return this.#kept.map((f) => ({ name: f.name, type: f.type, help: f.help, unit: f.unit }));
  }

  #newFamily(name: string, keepAlso: string): FamilyState {
    const keep = this.#keep === undefined || this.#keep(name) || (keepAlso !== name && this.#keep(keepAlso));
    const f: FamilyState = {
      name,
      type: 'untyped',
      typed: false,
      help: undefined,
      unit: undefined,
      suffixes: SUFFIXES.untyped,
      nameHash: hashState(name),
      suffixHashes: [],
      keep,
      index: keep ? this.#kept.length : -1,
    };
    if (keep) this.#kept.push(f);
    this.#byName.set(name, f);
    return f;
  }
}
