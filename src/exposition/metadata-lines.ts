/**
 * Comment lines and the family metadata they carry: the `MetadataLineScanner` layer of the exposition
 * parser (see text-cursor.ts for the layering), which also tracks the current family.
 *
 * Contract:
 * - `commentLine(pos)` reads a line starting with `#`: `# HELP name text`, `# TYPE name type` and, in
 *   OpenMetrics, `# UNIT name unit` set the named family's metadata and make it the current family;
 *   any other comment is skipped. HELP text unescapes `\\` and `\n` (and `\"` in OpenMetrics); other
 *   escapes are kept verbatim. A type the format does not know, or a second TYPE line with another
 *   type, is an error.
 * - OpenMetrics: a `# EOF` line (blanks around it allowed) sets `sawEof`; `checkAfterEof` then accepts
 *   only blank lines up to the end. In the text format `# EOF` is an ordinary comment.
 * - `familyOf(start, end)` finds the family of a sample named `text[start, end)` when it is not the
 *   current family's (see metric-families.ts) and makes it the current family.
 * - Malformed input throws `ExpositionError` at the offending position; nothing else is thrown.
 */

import { LabelSetScanner } from './label-set-scanner.js';
import { FamilyRegistry, type FamilyState, OPENMETRICS_TYPES, setFamilyType, TEXT_TYPES } from './metric-families.js';
import type { MetricType } from './parsed-page.js';
import { isBlank, isNameChar, isNameStart } from './text-cursor.js';

/** Character codes, declared here rather than imported: see text-cursor.ts. */
const LF = 10;
const CR = 13;
const QUOTE = 34;
const BSLASH = 92;

export abstract class MetadataLineScanner extends LabelSetScanner {
  protected readonly openMetrics: boolean;
  protected readonly families: FamilyRegistry;
  /** The family of the last metadata line or sample; a sample named like it is matched against it first. */
  protected cur: FamilyState | undefined;
  /** OpenMetrics: the `# EOF` line has been read. */
  protected sawEof = false;

  protected constructor(
    text: string,
    source: string | undefined,
    openMetrics: boolean,
    keep: ((family: string) => boolean) | undefined,
  ) {
    super(text, source);
    this.openMetrics = openMetrics;
    this.families = new FamilyRegistry(keep);
  }

  /** Parses a line starting with `#`; returns the position after its line break. */
  protected commentLine(pos: number): number {
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
    const family = this.families.named(name);
    if (isType) {
      const typeName = text.slice(textStart, textEnd).trim();
      const allowed = this.openMetrics ? OPENMETRICS_TYPES : TEXT_TYPES;
      if (!allowed.has(typeName)) throw this.error(`invalid metric type ${this.quote(typeName)}`, textStart);
      const type = typeName as MetricType;
      if (family.typed && family.type !== type) {
        throw this.error(`second TYPE line for metric name ${this.quote(name)} with a different type`, pos);
      }
      setFamilyType(family, type);
    } else if (isHelp) {
      family.help = this.unescapeHelp(textStart, textEnd);
    } else {
      family.unit = text.slice(textStart, textEnd);
    }
    this.cur = family;
    return end + 1;
  }

  /** HELP text `text[start, end)` with its escapes resolved. */
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

  /** After `# EOF` (at `pos`, the next line): only blank lines may follow. */
  protected checkAfterEof(pos: number): void {
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

  /**
   * The family of a sample named `text[start, end)` when it is not the current family's: an
   * earlier family it belongs to, or a new untyped one. Becomes the current family.
   */
  protected familyOf(start: number, end: number): FamilyState {
    const f = this.families.ofSample(this.text.slice(start, end));
    this.cur = f;
    return f;
  }
}
