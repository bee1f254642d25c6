/**
 * Exposition parser: the Prometheus text format 0.0.4 and OpenMetrics 1.0, into a `ParsedPage`.
 *
 * Contract:
 * - The caller says which format it reads (`format`, from the Content-Type; a recording is
 *   OpenMetrics). Timestamps are integer milliseconds in the text format and seconds (with a
 *   fraction) in OpenMetrics; both come out as unix milliseconds, OpenMetrics ones truncated to the
 *   millisecond as Prometheus does (`int64(ts * 1000)`).
 * - OpenMetrics input must end with `# EOF` and have nothing but blank lines after it. In the text
 *   format `# EOF` is an ordinary comment.
 * - Accepted everywhere: HELP/TYPE (and UNIT in OpenMetrics), other comments, blank lines, blanks
 *   between tokens, labels in any order, a trailing comma, escapes `\\` `\"` `\n` in label values
 *   (other escapes are kept verbatim, as Prometheus does), NaN and ±Inf, exemplars
 *   (` # {labels} value [timestamp]`, validated and discarded), `_created` samples.
 * - Labels with an empty value are dropped (PromQL treats them as absent); a repeated label name
 *   is an error. Series are identified by their series key (see labels.ts); a series appearing
 *   twice gets one id and two samples.
 * - A sample belongs to the family of the preceding HELP/TYPE/UNIT line when its name is the
 *   family name plus a suffix the family's type allows (`_bucket`, `_sum`, `_count`, `_created`,
 *   `_total`, `_info`, `_gsum`, `_gcount`); otherwise to an earlier family it matches the same
 *   way, or to a new `untyped` family named after the sample.
 * - `keep(family)` is asked once per family; lines of families it rejects are skipped without
 *   being tokenized (so errors in them go unnoticed). `keepFamilies(DIAGNOSTIC_FAMILIES)` builds one.
 * - Any malformed line throws `ExpositionError` with its line and column; so do the `maxBytes`
 *   (UTF-8 size of the text) and `maxSeries` limits. Nothing else is thrown.
 */
import { ExpositionError } from './exposition-error.js';
import { floatError, readFloat, readInt } from './float-text.js';
import { compareLabelNames, escapeLabelValue } from './labels.js';
import type { ExpositionFormat, MetricFamily, MetricType, ParsedPage } from './parsed-page.js';
import { HASH_PRIME, HASH_SEED, hashFinish, hashRange, SeriesIndex } from './series-index.js';
import { SeriesTable } from './series-table.js';

export interface ParseOptions {
  /** Default `prometheus-text`. */
  readonly format?: ExpositionFormat;
  /** Which families to keep (by family name as in `# TYPE`); default all. */
  readonly keep?: (family: string) => boolean;
  /** Largest accepted text, in UTF-8 bytes. Default `DEFAULT_MAX_BYTES`. */
  readonly maxBytes?: number;
  /** Most distinct series accepted. Default `DEFAULT_MAX_SERIES`. */
  readonly maxSeries?: number;
  /** Reject samples without a timestamp (recordings). Default false. */
  readonly requireTimestamps?: boolean;
  /** Named in error messages (a file name, a URL). */
  readonly source?: string;
}

export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_SERIES = 1_000_000;

/**
 * A `keep` predicate for the given family names that works for both formats: a counter named
 * `foo_total` in the list is also kept when OpenMetrics calls its family `foo`.
 */
export function keepFamilies(names: readonly string[]): (family: string) => boolean {
  const set = new Set(names);
  return (family) => set.has(family) || set.has(`${family}_total`);
}

export function parseExposition(text: string, options: ParseOptions = {}): ParsedPage {
  return new ExpositionParser(text, options).parse();
}

const LF = 10;
const CR = 13;
const SP = 32;
const TAB = 9;
const HASH = 35;
const LBRACE = 123;
const RBRACE = 125;
const COMMA = 44;
const EQ = 61;
const QUOTE = 34;
const BSLASH = 92;

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
const TEXT_TYPES = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const OPENMETRICS_TYPES = new Set<string>([
  'counter',
  'gauge',
  'histogram',
  'summary',
  'unknown',
  'info',
  'stateset',
  'gaugehistogram',
]);

interface FamilyState {
  name: string;
  type: MetricType;
  typed: boolean;
  help: string | undefined;
  unit: string | undefined;
  suffixes: readonly string[];
  /** Unfinished key hashes (FNV state) of the name alone and of the name plus each suffix. */
  nameHash: number;
  suffixHashes: number[];
  keep: boolean;
  /** Index in the output families, -1 when not kept. */
  index: number;
}

/** FNV state after `text` (without the final avalanche). */
function hashState(text: string): number {
  let h = HASH_SEED;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), HASH_PRIME);
  return h;
}

function setSuffixes(f: FamilyState, suffixes: readonly string[]): void {
  f.suffixes = suffixes;
  f.suffixHashes = suffixes.map((sfx) => hashState(f.name + sfx));
}

function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58;
}
function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || (c >= 48 && c <= 57);
}
function isLabelStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}
function isLabelChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (c >= 48 && c <= 57);
}
function isBlank(c: number): boolean {
  return c === SP || c === TAB;
}

/** Canonical order of two label names given as text ranges: `le`/`quantile` last, then by name. */
function compareNamesAt(text: string, a0: number, a1: number, b0: number, b1: number): number {
  const ra = rankAt(text, a0, a1);
  const rb = rankAt(text, b0, b1);
  if (ra !== rb) return ra - rb;
  const la = a1 - a0;
  const lb = b1 - b0;
  const l = Math.min(la, lb);
  for (let i = 0; i < l; i++) {
    const d = text.charCodeAt(a0 + i) - text.charCodeAt(b0 + i);
    if (d !== 0) return d;
  }
  return la - lb;
}
function rankAt(text: string, a0: number, a1: number): number {
  const l = a1 - a0;
  if (l === 2) return text.charCodeAt(a0) === 108 && text.charCodeAt(a0 + 1) === 101 ? 1 : 0;
  if (l === 8) return text.startsWith('quantile', a0) ? 1 : 0;
  return 0;
}

/** `a[ai, ai + len)` equals `b[bi, bi + len)`. */
function sameChars(a: string, ai: number, b: string, bi: number, len: number): boolean {
  for (let i = 0; i < len; i++) {
    if (a.charCodeAt(ai + i) !== b.charCodeAt(bi + i)) return false;
  }
  return true;
}

function unescapeValue(text: string, start: number, end: number): string {
  let out = '';
  let from = start;
  for (let i = start; i < end; i++) {
    if (text.charCodeAt(i) !== BSLASH) continue;
    const e = text.charCodeAt(i + 1);
    if (e === BSLASH || e === QUOTE || e === 110) {
      out += text.slice(from, i) + (e === 110 ? '\n' : e === QUOTE ? '"' : '\\');
      from = i + 2;
    }
    i++;
  }
  return from === start ? text.slice(start, end) : out + text.slice(from, end);
}

class ExpositionParser {
  private readonly text: string;
  private readonly openMetrics: boolean;
  private readonly keep: ((family: string) => boolean) | undefined;
  private readonly maxSeries: number;
  private readonly requireTimestamps: boolean;
  private readonly source: string | undefined;

  private line = 1;
  private lineStart = 0;
  private sawEof = false;

  private readonly familyStates = new Map<string, FamilyState>();
  private readonly keptFamilies: FamilyState[] = [];
  private cur: FamilyState | undefined;

  private readonly index: SeriesIndex;
  private seriesFamilies = new Int32Array(1024);

  private count = 0;
  private sampleSeries: Int32Array;
  private sampleValues: Float64Array;
  private sampleTimes: Float64Array;
  private skipped = 0;

  /** Label positions of the current line: name start, name end, value start, value end. */
  private lp = new Int32Array(4 * 32);
  /** Per label: 1 when its value has an escape. */
  private le = new Uint8Array(32);

  constructor(text: string, options: ParseOptions) {
    this.text = text;
    this.index = new SeriesIndex(text);
    this.openMetrics = options.format === 'openmetrics';
    this.keep = options.keep;
    this.maxSeries = options.maxSeries ?? DEFAULT_MAX_SERIES;
    this.requireTimestamps = options.requireTimestamps ?? false;
    this.source = options.source;
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    if (text.length > maxBytes || (text.length * 3 > maxBytes && Buffer.byteLength(text, 'utf8') > maxBytes)) {
      throw new ExpositionError(`exposition larger than the limit of ${maxBytes} bytes`, 0, 0, this.source);
    }
    const estimate = Math.max(64, Math.min(1 << 22, (text.length / 48) | 0));
    this.sampleSeries = new Int32Array(estimate);
    this.sampleValues = new Float64Array(estimate);
    this.sampleTimes = new Float64Array(estimate);
  }

  parse(): ParsedPage {
    const text = this.text;
    const n = text.length;
    let pos = 0;
    while (pos < n) {
      this.lineStart = pos;
      const c = text.charCodeAt(pos);
      if (isNameStart(c)) {
        pos = this.sampleLine(pos);
      } else if (c === LF) {
        pos++;
      } else if (c === HASH) {
        pos = this.commentLine(pos);
        if (this.sawEof) {
          this.checkAfterEof(pos);
          break;
        }
      } else if (isBlank(c) || c === CR) {
        let p = pos;
        while (p < n && (isBlank(text.charCodeAt(p)) || text.charCodeAt(p) === CR)) p++;
        if (p >= n || text.charCodeAt(p) === LF) {
          pos = p + 1;
        } else if (isNameStart(text.charCodeAt(p)) || text.charCodeAt(p) === HASH) {
          // Leading blanks before a token are allowed, as Prometheus's lexer allows them.
          this.lineStart = pos;
          pos = text.charCodeAt(p) === HASH ? this.commentLine(p) : this.sampleLine(p);
          if (this.sawEof) {
            this.checkAfterEof(pos);
            break;
          }
        } else {
          throw this.error(`${this.describe(p)} is not a valid start token`, p);
        }
      } else {
        throw this.error(`${this.describe(pos)} is not a valid start token`, pos);
      }
      this.line++;
    }
    if (this.openMetrics && !this.sawEof) {
      this.lineStart = Math.min(pos, n);
      throw this.error('data does not end with # EOF', this.lineStart);
    }
    const families: MetricFamily[] = this.keptFamilies.map((f) => ({
      name: f.name,
      type: f.type,
      help: f.help,
      unit: f.unit,
    }));
    return {
      format: this.openMetrics ? 'openmetrics' : 'prometheus-text',
      families,
      series: SeriesTable.fromText(
        text,
        this.index.ranges().starts,
        this.index.ranges().ends,
        this.index.strings(),
        this.seriesFamilies.subarray(0, this.index.count),
        this.index.hashes(),
      ),
      samples: {
        count: this.count,
        series: this.sampleSeries.subarray(0, this.count),
        values: this.sampleValues.subarray(0, this.count),
        timestamps: this.sampleTimes.subarray(0, this.count),
      },
      skippedLines: this.skipped,
    };
  }

  // ---- errors ---------------------------------------------------------------------------------

  private error(reason: string, pos: number): ExpositionError {
    return new ExpositionError(reason, this.line, pos - this.lineStart + 1, this.source);
  }

  /** The token at `pos`, quoted, for "got …" messages. */
  private describe(pos: number): string {
    const text = this.text;
    if (pos >= text.length) return '"EOF"';
    const c = text.charCodeAt(pos);
    if (c === LF) return '"\\n"';
    let end = pos + 1;
    while (end < text.length && end - pos < 24) {
      const d = text.charCodeAt(end);
      if (d === LF || isBlank(d) || d === COMMA || d === EQ || d === LBRACE || d === RBRACE || d === QUOTE) break;
      end++;
    }
    return JSON.stringify(text.slice(pos, end));
  }

  // ---- comments and metadata ------------------------------------------------------------------

  /** Parses a line starting with `#`; returns the position after its line break. */
  private commentLine(pos: number): number {
    const text = this.text;
    const n = text.length;
    let p = pos + 1;
    if (p >= n || !isBlank(text.charCodeAt(p))) return this.skipLine(p);
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    const wordStart = p;
    while (p < n && !isBlank(text.charCodeAt(p)) && text.charCodeAt(p) !== LF && text.charCodeAt(p) !== CR) p++;
    const word = text.slice(wordStart, p);
    if (word === 'EOF' && this.openMetrics) {
      const end = this.lineEnd(p);
      for (let i = p; i < end; i++) {
        if (!isBlank(text.charCodeAt(i)) && text.charCodeAt(i) !== CR) return this.skipLine(p);
      }
      this.sawEof = true;
      return end + 1;
    }
    const isHelp = word === 'HELP';
    const isType = word === 'TYPE';
    const isUnit = word === 'UNIT' && this.openMetrics;
    if ((!isHelp && !isType && !isUnit) || p >= n || !isBlank(text.charCodeAt(p))) return this.skipLine(p);
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    const nameStart = p;
    if (p < n && isNameStart(text.charCodeAt(p))) {
      p++;
      while (p < n && isNameChar(text.charCodeAt(p))) p++;
    }
    if (p === nameStart) throw this.error(`expected metric name after ${word}, got ${this.describe(p)}`, p);
    const name = text.slice(nameStart, p);
    const end = this.lineEnd(p);
    let textStart = p;
    if (textStart < end) {
      if (!isBlank(text.charCodeAt(textStart))) {
        throw this.error(`expected metric name after ${word}, got ${this.describe(nameStart)}`, nameStart);
      }
      textStart++;
    }
    let textEnd = end;
    if (textEnd > textStart && text.charCodeAt(textEnd - 1) === CR) textEnd--;
    const family = this.familyNamed(name);
    if (isType) {
      const typeName = text.slice(textStart, textEnd).trim();
      const allowed = this.openMetrics ? OPENMETRICS_TYPES : TEXT_TYPES;
      if (!allowed.has(typeName)) throw this.error(`invalid metric type ${JSON.stringify(typeName)}`, textStart);
      const type = typeName as MetricType;
      if (family.typed && family.type !== type) {
        throw this.error(`second TYPE line for metric name ${JSON.stringify(name)} with a different type`, pos);
      }
      family.type = type;
      family.typed = true;
      setSuffixes(family, SUFFIXES[type]);
    } else if (isHelp) {
      family.help = this.unescapeHelp(textStart, textEnd);
    } else {
      family.unit = text.slice(textStart, textEnd);
    }
    this.cur = family;
    return end + 1;
  }

  private unescapeHelp(start: number, end: number): string {
    const text = this.text;
    let out = '';
    let from = start;
    for (let i = start; i < end; i++) {
      if (text.charCodeAt(i) !== BSLASH) continue;
      const e = text.charCodeAt(i + 1);
      if (e === BSLASH || e === 110 || (e === QUOTE && this.openMetrics)) {
        out += text.slice(from, i) + (e === 110 ? '\n' : e === QUOTE ? '"' : '\\');
        from = i + 2;
      }
      i++;
    }
    return out + text.slice(from, end);
  }

  private checkAfterEof(pos: number): void {
    const text = this.text;
    this.line++;
    this.lineStart = pos;
    for (let p = pos; p < text.length; p++) {
      const c = text.charCodeAt(p);
      if (c === LF) {
        this.line++;
        this.lineStart = p + 1;
      } else if (!isBlank(c) && c !== CR) {
        throw this.error('unexpected data after # EOF', p);
      }
    }
  }

  private lineEnd(pos: number): number {
    const i = this.text.indexOf('\n', pos);
    return i === -1 ? this.text.length : i;
  }

  private skipLine(pos: number): number {
    return this.lineEnd(pos) + 1;
  }

  // ---- families -------------------------------------------------------------------------------

  private familyNamed(name: string): FamilyState {
    let f = this.familyStates.get(name);
    if (f === undefined) f = this.newFamily(name, name);
    return f;
  }

  private newFamily(name: string, keepAlso: string): FamilyState {
    const keep = this.keep === undefined || this.keep(name) || (keepAlso !== name && this.keep(keepAlso));
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
      index: keep ? this.keptFamilies.length : -1,
    };
    if (keep) this.keptFamilies.push(f);
    this.familyStates.set(name, f);
    return f;
  }

  /**
   * The family of a sample named `text[start, end)` when it is not the current family's: an
   * earlier family it belongs to, or a new untyped one. Becomes the current family.
   */
  private familyOf(start: number, end: number): FamilyState {
    const text = this.text;
    const name = text.slice(start, end);
    let f = this.familyStates.get(name);
    if (f === undefined) {
      let base = name;
      for (const s of ALL_SUFFIXES) {
        if (name.length > s.length && name.endsWith(s)) {
          const candidate = name.slice(0, name.length - s.length);
          const g = this.familyStates.get(candidate);
          if (g?.suffixes.includes(s)) {
            f = g;
            break;
          }
          if (base === name) base = candidate;
        }
      }
      f ??= this.newFamily(name, base);
    }
    this.cur = f;
    return f;
  }

  // ---- samples --------------------------------------------------------------------------------

  /** Parses a sample line starting at `pos` (a metric name); returns the position after its line break. */
  private sampleLine(pos: number): number {
    const text = this.text;
    const n = text.length;
    const nameStart = pos;
    // The name usually is the current family's name (plus a suffix): compare it with that name
    // and take the key hash of the name from the family; otherwise scan and hash it.
    const cur = this.cur;
    let p = pos;
    let matched = 0;
    if (cur !== undefined) {
      const fname = cur.name;
      const fl = fname.length;
      while (matched < fl && p < n && text.charCodeAt(p) === fname.charCodeAt(matched)) {
        p++;
        matched++;
      }
    }
    if (p === pos) p++;
    while (p < n && isNameChar(text.charCodeAt(p))) p++;
    const nameEnd = p;
    let family: FamilyState | undefined;
    let h = 0;
    if (cur !== undefined && matched === cur.name.length) {
      const extra = nameEnd - nameStart - matched;
      if (extra === 0) {
        family = cur;
        h = cur.nameHash;
      } else {
        const suffixes = cur.suffixes;
        for (let k = 0; k < suffixes.length; k++) {
          const sfx = suffixes[k] as string;
          if (sfx.length === extra && sameChars(text, nameStart + matched, sfx, 0, extra)) {
            family = cur;
            h = cur.suffixHashes[k] as number;
            break;
          }
        }
      }
    }
    if (family === undefined) {
      family = this.familyOf(nameStart, nameEnd);
      h = HASH_SEED;
      for (let i = nameStart; i < nameEnd; i++) h = Math.imul(h ^ text.charCodeAt(i), HASH_PRIME);
    }
    if (!family.keep) {
      this.skipped++;
      return this.skipLine(p);
    }

    let c = text.charCodeAt(p);
    let canonical = true;
    let keyEnd = nameEnd;
    let labelCount = 0;
    let separated = false;
    if (isBlank(c)) {
      while (p < n && isBlank(text.charCodeAt(p))) p++;
      c = text.charCodeAt(p);
      separated = true;
      if (c === LBRACE) canonical = false;
    }
    if (c === LBRACE) {
      p = this.labels(p + 1, Math.imul(h ^ LBRACE, HASH_PRIME));
      h = this.labelsHash;
      labelCount = this.labelCount;
      canonical &&= this.labelsCanonical;
      keyEnd = p;
      c = text.charCodeAt(p);
      separated = isBlank(c);
      while (p < n && isBlank(text.charCodeAt(p))) p++;
      c = text.charCodeAt(p);
    }

    // Value: after blanks, or right after the closing brace (Prometheus's lexer allows that).
    if (p >= n || c === LF || c === CR || (!separated && keyEnd === nameEnd)) {
      throw this.error(`expected value after metric, got ${this.describe(p)}`, p);
    }
    const valueStart = p;
    while (p < n) {
      c = text.charCodeAt(p);
      if (c === SP || c === LF || c === TAB || c === CR) break;
      p++;
    }
    if (p === valueStart) throw this.error(`expected value after metric, got ${this.describe(p)}`, p);
    const value = readFloat(text, valueStart, p);
    if (floatError !== undefined) {
      throw this.error(`invalid value ${JSON.stringify(text.slice(valueStart, p))}: ${floatError}`, valueStart);
    }

    // Optional timestamp, optional exemplar.
    let ts = Number.NaN;
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    c = text.charCodeAt(p);
    if (p < n && c !== LF && c !== CR && c !== HASH) {
      const tsStart = p;
      while (p < n) {
        c = text.charCodeAt(p);
        if (c === SP || c === LF || c === TAB || c === CR) break;
        p++;
      }
      if (this.openMetrics) {
        const seconds = readFloat(text, tsStart, p);
        if (floatError !== undefined || !Number.isFinite(seconds)) {
          throw this.error(`invalid timestamp ${JSON.stringify(text.slice(tsStart, p))}`, tsStart);
        }
        ts = Math.trunc(seconds * 1000);
      } else {
        ts = readInt(text, tsStart, p);
        if (floatError !== undefined) {
          throw this.error(`expected timestamp or new record, got ${this.describe(tsStart)}`, tsStart);
        }
      }
      while (p < n && isBlank(text.charCodeAt(p))) p++;
      c = text.charCodeAt(p);
    }
    if (c === HASH && p < n) {
      p = this.exemplar(p);
      c = text.charCodeAt(p);
    }
    if (c === CR) {
      p++;
      c = text.charCodeAt(p);
    }
    if (p < n && c !== LF) {
      throw this.error(
        `${Number.isNaN(ts) ? 'expected timestamp or new record' : 'expected next entry after timestamp'}, got ${this.describe(p)}`,
        p,
      );
    }
    if (this.requireTimestamps && Number.isNaN(ts)) throw this.error('sample without a timestamp', nameStart);

    // Series id: looked up by the line's own text when it is the canonical key (its hash was
    // computed while scanning), otherwise by the canonical key built from the labels.
    let id: number;
    if (canonical) {
      const hk = hashFinish(h);
      id = this.index.findRange(nameStart, keyEnd, hk);
      if (id === -1) {
        this.checkSeriesLimit(nameStart);
        id = this.index.addRange(nameStart, keyEnd, hk);
        this.setFamily(id, family);
      }
    } else {
      const key = this.canonicalKey(nameStart, nameEnd, labelCount);
      const hk = hashRange(key, 0, key.length);
      id = this.index.findString(key, hk);
      if (id === -1) {
        this.checkSeriesLimit(nameStart);
        id = this.index.addString(key, hk);
        this.setFamily(id, family);
      }
    }

    let i = this.count;
    if (i === this.sampleSeries.length) this.grow();
    this.sampleSeries[i] = id;
    this.sampleValues[i] = value;
    this.sampleTimes[i] = ts;
    this.count = ++i;
    return p + 1;
  }

  private checkSeriesLimit(at: number): void {
    if (this.index.count >= this.maxSeries) throw this.error(`too many series: the limit is ${this.maxSeries}`, at);
  }

  private setFamily(id: number, family: FamilyState): void {
    if (id >= this.seriesFamilies.length) {
      const grown = new Int32Array(this.seriesFamilies.length * 2);
      grown.set(this.seriesFamilies);
      this.seriesFamilies = grown;
    }
    this.seriesFamilies[id] = family.index;
  }

  private grow(): void {
    const cap = this.sampleSeries.length * 2;
    const s = new Int32Array(cap);
    s.set(this.sampleSeries);
    this.sampleSeries = s;
    const v = new Float64Array(cap);
    v.set(this.sampleValues);
    this.sampleValues = v;
    const t = new Float64Array(cap);
    t.set(this.sampleTimes);
    this.sampleTimes = t;
  }

  private labelCount = 0;
  private labelsCanonical = true;
  private labelsHash = 0;

  /**
   * Scans a label set from just after `{`, continuing the key hash `h` over every character up to
   * and including `}`. Records positions in `lp`/`le`; sets `labelCount`, `labelsCanonical` (the
   * text is already the canonical key) and `labelsHash`; returns the position after `}`.
   */
  private labels(pos: number, hIn: number): number {
    const text = this.text;
    const n = text.length;
    let h = hIn;
    let p = pos;
    let count = 0;
    let canonical = true;
    let trailingComma = false;
    for (;;) {
      let c = text.charCodeAt(p);
      if (isBlank(c)) {
        canonical = false;
        while (p < n && isBlank(text.charCodeAt(p))) p++;
        c = text.charCodeAt(p);
      }
      if (c === RBRACE && p < n) {
        if (count === 0 || trailingComma) canonical = false;
        h = Math.imul(h ^ c, HASH_PRIME);
        p++;
        break;
      }
      if (!isLabelStart(c) || p >= n) throw this.error(`expected label name, got ${this.describe(p)}`, p);
      const ns = p;
      for (;;) {
        h = Math.imul(h ^ c, HASH_PRIME);
        p++;
        c = text.charCodeAt(p);
        if (p >= n || !isLabelChar(c)) break;
      }
      const ne = p;
      if (isBlank(c)) {
        canonical = false;
        while (p < n && isBlank(text.charCodeAt(p))) p++;
        c = text.charCodeAt(p);
      }
      if (c !== EQ || p >= n) throw this.error(`expected equal, got ${this.describe(p)}`, p);
      h = Math.imul(h ^ c, HASH_PRIME);
      p++;
      c = text.charCodeAt(p);
      if (isBlank(c)) {
        canonical = false;
        while (p < n && isBlank(text.charCodeAt(p))) p++;
        c = text.charCodeAt(p);
      }
      if (c !== QUOTE || p >= n) throw this.error(`expected label value, got ${this.describe(p)}`, p);
      h = Math.imul(h ^ c, HASH_PRIME);
      p++;
      const vs = p;
      let escaped = 0;
      for (;;) {
        if (p >= n) throw this.error('unterminated label value', vs - 1);
        c = text.charCodeAt(p);
        if (c === QUOTE) break;
        if (c === LF) throw this.error('unterminated label value: line break inside quotes', p);
        h = Math.imul(h ^ c, HASH_PRIME);
        if (c === BSLASH) {
          const e = text.charCodeAt(p + 1);
          if (p + 1 >= n || e === LF) throw this.error('unterminated label value: escape at end of line', p);
          if (e !== BSLASH && e !== QUOTE && e !== 110) canonical = false;
          h = Math.imul(h ^ e, HASH_PRIME);
          escaped = 1;
          p += 2;
          continue;
        }
        p++;
      }
      const ve = p;
      h = Math.imul(h ^ QUOTE, HASH_PRIME);
      p++;
      if (ve === vs) canonical = false;
      if (count * 4 + 4 > this.lp.length) {
        const lp = new Int32Array(this.lp.length * 2);
        lp.set(this.lp);
        this.lp = lp;
        const le = new Uint8Array(this.le.length * 2);
        le.set(this.le);
        this.le = le;
      }
      const lp = this.lp;
      if (canonical && count > 0) {
        const o = (count - 1) * 4;
        if (compareNamesAt(text, lp[o] as number, lp[o + 1] as number, ns, ne) >= 0) canonical = false;
      }
      const o = count * 4;
      lp[o] = ns;
      lp[o + 1] = ne;
      lp[o + 2] = vs;
      lp[o + 3] = ve;
      this.le[count] = escaped;
      count++;
      trailingComma = false;
      c = text.charCodeAt(p);
      if (isBlank(c)) {
        canonical = false;
        while (p < n && isBlank(text.charCodeAt(p))) p++;
        c = text.charCodeAt(p);
      }
      if (c === COMMA && p < n) {
        h = Math.imul(h ^ c, HASH_PRIME);
        trailingComma = true;
        p++;
        continue;
      }
      if (c === RBRACE && p < n) {
        h = Math.imul(h ^ c, HASH_PRIME);
        p++;
        break;
      }
      throw this.error(`expected comma or closing brace, got ${this.describe(p)}`, p);
    }
    this.labelCount = count;
    this.labelsCanonical = canonical;
    this.labelsHash = h;
    return p;
  }

  /** Builds the series key from the recorded label positions (sorting, unescaping, dropping empties). */
  private canonicalKey(nameStart: number, nameEnd: number, count: number): string {
    const text = this.text;
    const lp = this.lp;
    const pairs: { name: string; value: string; at: number }[] = [];
    for (let i = 0; i < count; i++) {
      const o = i * 4;
      const vs = lp[o + 2] as number;
      const ve = lp[o + 3] as number;
      const value = this.le[i] === 1 ? unescapeValue(text, vs, ve) : text.slice(vs, ve);
      pairs.push({ name: text.slice(lp[o] as number, lp[o + 1] as number), value, at: lp[o] as number });
    }
    pairs.sort((a, b) => compareLabelNames(a.name, b.name));
    let key = text.slice(nameStart, nameEnd);
    let first = true;
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i] as { name: string; value: string; at: number };
      if (i > 0 && (pairs[i - 1] as { name: string }).name === pair.name) {
        throw this.error(`duplicate label name ${JSON.stringify(pair.name)}`, pair.at);
      }
      if (pair.value === '') continue;
      key += `${first ? '{' : ','}${pair.name}="${escapeLabelValue(pair.value)}"`;
      first = false;
    }
    return first ? key : `${key}}`;
  }

  /** Validates an exemplar starting at `#`; returns the position of the line end. */
  private exemplar(pos: number): number {
    const text = this.text;
    const n = text.length;
    let p = pos + 1;
    if (!isBlank(text.charCodeAt(p))) throw this.error(`expected exemplar, got ${this.describe(pos)}`, pos);
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    if (text.charCodeAt(p) !== LBRACE) throw this.error(`expected exemplar labels, got ${this.describe(p)}`, p);
    const savedCount = this.labelCount;
    const savedCanonical = this.labelsCanonical;
    const lp = this.lp.slice();
    const le = this.le.slice();
    p = this.labels(p + 1, 0);
    this.labelCount = savedCount;
    this.labelsCanonical = savedCanonical;
    this.lp = lp;
    this.le = le;
    if (!isBlank(text.charCodeAt(p)))
      throw this.error(`expected value after exemplar labels, got ${this.describe(p)}`, p);
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    const vs = p;
    while (p < n && !isBlank(text.charCodeAt(p)) && text.charCodeAt(p) !== LF && text.charCodeAt(p) !== CR) p++;
    readFloat(text, vs, p);
    if (floatError !== undefined || p === vs) {
      throw this.error(`invalid exemplar value ${JSON.stringify(text.slice(vs, p))}`, vs);
    }
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    if (p < n && text.charCodeAt(p) !== LF && text.charCodeAt(p) !== CR) {
      const ts = p;
      while (p < n && !isBlank(text.charCodeAt(p)) && text.charCodeAt(p) !== LF && text.charCodeAt(p) !== CR) p++;
      const v = readFloat(text, ts, p);
      if (floatError !== undefined || !Number.isFinite(v)) {
        throw this.error(`invalid exemplar timestamp ${JSON.stringify(text.slice(ts, p))}`, ts);
      }
      while (p < n && isBlank(text.charCodeAt(p))) p++;
    }
    return p;
  }
}
