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
 *
 * The parser is one object built in layers, each in its own module: `TextCursor` (text-cursor.ts:
 * character classes, positions, errors), `LabelSetScanner` (label-set-scanner.ts: label sets, series
 * keys, exemplars), `MetadataLineScanner` (metadata-lines.ts: comment lines, families, `# EOF`) and
 * `ExpositionParser` here (the line loop, sample lines, series ids, the result). Layers rather than
 * separate objects because the per-character loops must read their state from `this` alone.
 */

import { ExpositionError } from './exposition-error.js';
import { floatError, readFloat, readInt } from './float-text.js';
import { LABEL_LIMIT_REASON } from './label-set-scanner.js';
import { MetadataLineScanner } from './metadata-lines.js';
import type { FamilyState } from './metric-families.js';
import type { ExpositionFormat, ParsedPage } from './parsed-page.js';
import { HASH_PRIME, HASH_SEED, hashFinish, hashRange, SeriesIndex } from './series-index.js';
import { SeriesTable } from './series-table.js';
import { isBlank, isNameChar, isNameStart, sameChars } from './text-cursor.js';

/** Character codes, declared here rather than imported: see text-cursor.ts. */
const LF = 10;
const CR = 13;
const SP = 32;
const TAB = 9;
const HASH = 35;
const LBRACE = 123;

/** The latest (and, negated, earliest) sample time Prometheus can store: int64 nanoseconds, in milliseconds. */
const MAX_TIMESTAMP_MS = 9_223_372_036_854;

export interface ParseOptions {
  /** Default `prometheus-text`. */
  readonly format?: ExpositionFormat;
  /** Which families to keep (by family name as in `# TYPE`); default all. */
  readonly keep?: (family: string) => boolean;
  /** Largest accepted text, in UTF-8 bytes. Default `DEFAULT_MAX_BYTES`. */
  readonly maxBytes?: number;
  /** Most distinct series accepted. Default `DEFAULT_MAX_SERIES`. */
  readonly maxSeries?: number;
  /** Most labels on one sample of a kept family; default unlimited. */
  readonly maxLabels?: number;
  /** Longest label value (characters) on a sample of a kept family; default unlimited. */
  readonly maxLabelValueLength?: number;
  /**
   * Most characters of the label names and values of one sample of a kept family together (as written, the metric
   * name excluded); default unlimited.
   */
  readonly maxLabelSetLength?: number;
  /** Reject samples without a timestamp (recordings). Default false. */
  readonly requireTimestamps?: boolean;
  /** Named in error messages (a file name, a URL). */
  readonly source?: string;
}

export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_SERIES = 1_000_000;

/** How an error over `maxSeries` begins (it crosses the parse worker as text). */
const SERIES_LIMIT_REASON = 'too many series: the limit is';
/** The reason of the error for a sample without a timestamp where every sample must have one (a recording). */
export const MISSING_TIMESTAMP_REASON = 'sample without a timestamp';
/** The reason of the error for OpenMetrics data that stops before its `# EOF` line (truncated, or plain text). */
export const MISSING_EOF_REASON = 'data does not end with # EOF';

/** Whether a parse failed on `maxSeries` (a page with more distinct kept series than allowed). */
export function isSeriesLimitError(error: ExpositionError): boolean {
  return error.reason.startsWith(SERIES_LIMIT_REASON);
}

/** Whether a parse failed on `maxLabels`, `maxLabelValueLength` or `maxLabelSetLength`. */
export function isLabelLimitError(error: ExpositionError): boolean {
  return error.reason.startsWith(LABEL_LIMIT_REASON);
}

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

class ExpositionParser extends MetadataLineScanner {
  private readonly maxSeries: number;
  private readonly requireTimestamps: boolean;

  private readonly index: SeriesIndex;
  private seriesFamilies = new Int32Array(1024);

  private count = 0;
  private sampleSeries: Int32Array;
  private sampleValues: Float64Array;
  private sampleTimes: Float64Array;
  private skipped = 0;

  constructor(text: string, options: ParseOptions) {
    super(text, options.source, options.format === 'openmetrics', options.keep);
    this.index = new SeriesIndex(text);
    this.maxSeries = options.maxSeries ?? DEFAULT_MAX_SERIES;
    this.maxLabels = options.maxLabels ?? Number.POSITIVE_INFINITY;
    this.maxLabelValueLength = options.maxLabelValueLength ?? Number.POSITIVE_INFINITY;
    this.maxLabelSetLength = options.maxLabelSetLength ?? Number.POSITIVE_INFINITY;
    this.requireTimestamps = options.requireTimestamps ?? false;
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
      throw this.error(MISSING_EOF_REASON, this.lineStart);
    }
    return {
      format: this.openMetrics ? 'openmetrics' : 'prometheus-text',
      families: this.families.keptFamilies(),
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
      throw this.error(`invalid value ${this.quote(text.slice(valueStart, p))}: ${floatError}`, valueStart);
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
          throw this.error(`invalid timestamp ${this.quote(text.slice(tsStart, p))}`, tsStart);
        }
        ts = Math.trunc(seconds * 1000);
      } else {
        ts = readInt(text, tsStart, p);
        if (floatError !== undefined) {
          throw this.error(`expected timestamp or new record, got ${this.describe(tsStart)}`, tsStart);
        }
      }
      if (!(Math.abs(ts) <= MAX_TIMESTAMP_MS)) {
        throw this.error(
          `timestamp ${this.quote(text.slice(tsStart, p))} is outside the times Prometheus stores (years 1678 to 2262)`,
          tsStart,
        );
      }
      while (p < n && isBlank(text.charCodeAt(p))) p++;
      c = text.charCodeAt(p);
    }
    if (c === HASH && p < n) {
      p = this.exemplar(p, labelCount);
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
    if (this.requireTimestamps && Number.isNaN(ts)) throw this.error(MISSING_TIMESTAMP_REASON, nameStart);

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
    if (this.index.count >= this.maxSeries) throw this.error(`${SERIES_LIMIT_REASON} ${this.maxSeries}`, at);
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
}
