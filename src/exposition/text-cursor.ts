/**
 * The lexical ground of the exposition parser: the character classes of the two text
 * formats, and `TextCursor`, the base layer of the parser object.
 *
 * Contract:
 * - Classes are Prometheus's: metric names `[a-zA-Z_:][a-zA-Z0-9_:]*`, label names `[a-zA-Z_][a-zA-Z0-9_]*`,
 *   blanks are space and tab.
 * - A `TextCursor` holds the text, the current line (1-based) and the position where that line starts.
 *   It never moves by itself: the layers above keep `line` and `lineStart` current. `error(reason, pos)`
 *   reports `pos` as column `pos - lineStart + 1` of `line`.
 * - The parser is one object built in layers (`TextCursor` → `LabelSetScanner` → `MetadataLineScanner`
 *   → `ExpositionParser`), each in its own module, so that the per-character loops read all their
 *   state from `this` without indirection. A layer uses only the layers below it.
 * - Character codes are not exported: each scanning module declares the ones it compares against.
 *   V8 does not constant-fold imported bindings, so an imported constant is a load in every
 *   comparison; importing them made parsing the pages of bench/parser.ts 5–14 % slower, while
 *   importing the character-class functions measured no different.
 */
import { ExpositionError } from './exposition-error.js';

/** Character codes, declared here rather than imported: see the module comment. */
const LF = 10;
const SP = 32;
const TAB = 9;
const LBRACE = 123;
const RBRACE = 125;
const COMMA = 44;
const EQ = 61;
const QUOTE = 34;
/** The longest token an error message quotes whole. */
const QUOTED_TOKEN_LIMIT = 64;

export function isNameStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58;
}
export function isNameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || (c >= 48 && c <= 57);
}
export function isLabelStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
}
export function isLabelChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (c >= 48 && c <= 57);
}
export function isBlank(c: number): boolean {
  return c === SP || c === TAB;
}

/** `a[ai, ai + len)` equals `b[bi, bi + len)`. */
export function sameChars(a: string, ai: number, b: string, bi: number, len: number): boolean {
  for (let i = 0; i < len; i++) {
    if (a.charCodeAt(ai + i) !== b.charCodeAt(bi + i)) return false;
  }
  return true;
}

export abstract class TextCursor {
  protected readonly text: string;
  /** Named in error messages (a file name, a URL). */
  protected readonly source: string | undefined;
  protected line = 1;
  protected lineStart = 0;

  protected constructor(text: string, source: string | undefined) {
    this.text = text;
    this.source = source;
  }

  protected error(reason: string, pos: number): ExpositionError {
    return new ExpositionError(reason, this.line, pos - this.lineStart + 1, this.source);
  }

  /**
   * A token of the input quoted for an error message, cut at `QUOTED_TOKEN_LIMIT` characters (with `…`): a
   * hostile page's 10 MB value must not become a 10 MB message kept in a target's health and served by the API.
   */
  protected quote(token: string): string {
    return JSON.stringify(token.length <= QUOTED_TOKEN_LIMIT ? token : `${token.slice(0, QUOTED_TOKEN_LIMIT)}…`);
  }

  /** The token at `pos`, quoted, for "got …" messages. */
  protected describe(pos: number): string {
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

  /** The position of the line break ending the line at `pos` (the text's length on the last line). */
  protected lineEnd(pos: number): number {
    const i = this.text.indexOf('\n', pos);
    return i === -1 ? this.text.length : i;
  }

  /** The position after the line break ending the line at `pos`. */
  protected skipLine(pos: number): number {
    return this.lineEnd(pos) + 1;
  }
}
