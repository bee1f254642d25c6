/**
 * Label sets and exemplars of sample lines: the `LabelSetScanner` layer of the exposition parser
 * (see text-cursor.ts for the layering).
 *
 * Contract:
 * - `labels(pos, h)` scans `{name="value",...}` from just after `{` to just after `}`, continuing the
 *   FNV key hash `h` over every character it passes. It records where each name and value is (`lp`,
 *   and in `le` whether the value has an escape), how many labels there are (`labelCount`), whether
 *   the text already is the canonical series key (`labelsCanonical`: labels in canonical order, no
 *   blanks, no empty values, only the escapes `\\` `\"` `\n`, no trailing comma) and the continued
 *   hash (`labelsHash`). Blanks between tokens and a trailing comma are accepted.
 * - `canonicalKey` builds the series key (see labels.ts) from the recorded positions: labels sorted,
 *   values unescaped and re-escaped, empty values dropped; a repeated label name is an error.
 * - `exemplar(pos, sampleLabels)` validates ` # {labels} value [timestamp]` and discards it, leaving the
 *   recorded positions of the sample's `sampleLabels` labels untouched.
 * - Malformed input throws `ExpositionError` at the offending position; nothing else is thrown.
 */
import { floatError, readFloat } from './float-text.js';
import { compareLabelNames, escapeLabelValue } from './labels.js';
import { HASH_PRIME } from './series-index.js';
import { isBlank, isLabelChar, isLabelStart, TextCursor } from './text-cursor.js';

/** Character codes, declared here rather than imported: see text-cursor.ts. */
const LF = 10;
const CR = 13;
const LBRACE = 123;
const RBRACE = 125;
const COMMA = 44;
const EQ = 61;
const QUOTE = 34;
const BSLASH = 92;

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

/** The value of a label written as `text[start, end)`, its escapes `\\` `\"` `\n` resolved (others kept verbatim). */
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

/**
 * How an error over `maxLabels`, `maxLabelValueLength` or `maxLabelSetLength` begins (it crosses the parse worker as
 * text).
 */
export const LABEL_LIMIT_REASON = 'label limit:';

export abstract class LabelSetScanner extends TextCursor {
  /** Label positions of the current line: name start, name end, value start, value end. */
  protected lp = new Int32Array(4 * 32);
  /** Per label: 1 when its value has an escape. */
  protected le = new Uint8Array(32);
  protected labelCount = 0;
  protected labelsCanonical = true;
  protected labelsHash = 0;
  /** Most labels in one label set, and the longest value (characters, escapes resolved); see `LABEL_LIMIT_REASON`. */
  protected maxLabels = Number.POSITIVE_INFINITY;
  protected maxLabelValueLength = Number.POSITIVE_INFINITY;
  /** Most characters of one label set's names and values together, as written (escapes unresolved). */
  protected maxLabelSetLength = Number.POSITIVE_INFINITY;

  /**
   * Scans a label set from just after `{`, continuing the key hash `h` over every character up to
   * and including `}`. Records positions in `lp`/`le`; sets `labelCount`, `labelsCanonical` (the
   * text is already the canonical key) and `labelsHash`; returns the position after `}`.
   */
  protected labels(pos: number, hIn: number): number {
    const text = this.text;
    const n = text.length;
    let h = hIn;
    let p = pos;
    let count = 0;
    let setLength = 0;
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
      if (ve - vs > this.maxLabelValueLength) {
        const length = escaped === 1 ? unescapeValue(text, vs, ve).length : ve - vs;
        if (length > this.maxLabelValueLength) {
          throw this.error(
            `${LABEL_LIMIT_REASON} a ${this.quote(text.slice(ns, ne))} label of ${length} characters, over the limit of ${this.maxLabelValueLength}`,
            vs,
          );
        }
      }
      if (count >= this.maxLabels) {
        throw this.error(`${LABEL_LIMIT_REASON} more than ${this.maxLabels} labels`, ns);
      }
      setLength += ne - ns + (ve - vs);
      if (setLength > this.maxLabelSetLength) {
        throw this.error(
          `${LABEL_LIMIT_REASON} labels of more than ${this.maxLabelSetLength} characters together (names and values)`,
          ns,
        );
      }
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
  protected canonicalKey(nameStart: number, nameEnd: number, count: number): string {
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
        throw this.error(`duplicate label name ${this.quote(pair.name)}`, pair.at);
      }
      if (pair.value === '') continue;
      key += `${first ? '{' : ','}${pair.name}="${escapeLabelValue(pair.value)}"`;
      first = false;
    }
    return first ? key : `${key}}`;
  }

  /**
   * Validates an exemplar starting at `#`; returns the position of the line end. The recorded
   * positions of the sample's own `sampleLabels` labels are kept.
   */
  protected exemplar(pos: number, sampleLabels: number): number {
    const text = this.text;
    const n = text.length;
    let p = pos + 1;
    if (!isBlank(text.charCodeAt(p))) throw this.error(`expected exemplar, got ${this.describe(pos)}`, pos);
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    if (text.charCodeAt(p) !== LBRACE) throw this.error(`expected exemplar labels, got ${this.describe(p)}`, p);
    // Only the sample's own labels are saved: the buffers keep the size of the widest label set of the
    // page (and `labelCount` still counts that set after a sample without labels), so saving more would
    // make every exemplar line cost as much as the widest line.
    const savedCount = this.labelCount;
    const savedCanonical = this.labelsCanonical;
    const savedPositions = this.lp.slice(0, sampleLabels * 4);
    const savedEscapes = this.le.slice(0, sampleLabels);
    p = this.labels(p + 1, 0);
    this.labelCount = savedCount;
    this.labelsCanonical = savedCanonical;
    this.lp.set(savedPositions);
    this.le.set(savedEscapes);
    if (!isBlank(text.charCodeAt(p)))
      throw this.error(`expected value after exemplar labels, got ${this.describe(p)}`, p);
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    const vs = p;
    while (p < n && !isBlank(text.charCodeAt(p)) && text.charCodeAt(p) !== LF && text.charCodeAt(p) !== CR) p++;
    readFloat(text, vs, p);
    if (floatError !== undefined || p === vs) {
      throw this.error(`invalid exemplar value ${this.quote(text.slice(vs, p))}`, vs);
    }
    while (p < n && isBlank(text.charCodeAt(p))) p++;
    if (p < n && text.charCodeAt(p) !== LF && text.charCodeAt(p) !== CR) {
      const ts = p;
      while (p < n && !isBlank(text.charCodeAt(p)) && text.charCodeAt(p) !== LF && text.charCodeAt(p) !== CR) p++;
      const v = readFloat(text, ts, p);
      if (floatError !== undefined || !Number.isFinite(v)) {
        throw this.error(`invalid exemplar timestamp ${this.quote(text.slice(ts, p))}`, ts);
      }
      while (p < n && isBlank(text.charCodeAt(p))) p++;
    }
    return p;
  }
}
