/**
 * The fleet selector of the configuration (`selector:`): PromQL label matchers, e.g. `job=~"my-operator.*"` or
 * `{namespace="system", job!="kube-controller-manager"}`, added to every selector the generated recording
 * rules, alerts and dashboards read. Parsed strictly: label names as PromQL spells them, the four matcher
 * operators, double- or single-quoted values with Go's escapes, regular expressions that compile; anything
 * else is an error naming what was wrong.
 */
import type { LabelMatcher } from './expr.js';

export class SelectorError extends Error {}

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const OPERATORS = ['=~', '!~', '!=', '='] as const;
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  '"': '"',
  "'": "'",
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

/** The matchers of `text`; the braces are optional. An empty selector is no matcher. */
export function parseSelector(text: string): LabelMatcher[] {
  let rest = text.trim();
  if (rest.startsWith('{')) {
    if (!rest.endsWith('}')) throw new SelectorError('unclosed `{`');
    rest = rest.slice(1, -1).trim();
  }
  const matchers: LabelMatcher[] = [];
  while (rest.length > 0) {
    const name = LABEL_NAME.exec(rest)?.[0];
    if (name === undefined) throw new SelectorError(`expected a label name at \`${rest}\``);
    if (name === '__name__')
      throw new SelectorError('`__name__` cannot be matched: the selector applies to every metric');
    rest = rest.slice(name.length).trimStart();
    const op = OPERATORS.find((o) => rest.startsWith(o));
    if (op === undefined) throw new SelectorError(`expected =, !=, =~ or !~ after \`${name}\``);
    rest = rest.slice(op.length).trimStart();
    const { value, length } = quoted(rest, name);
    rest = rest.slice(length).trimStart();
    if (op === '=~' || op === '!~') checkRegex(value, name);
    matchers.push({ label: name, op, value });
    if (rest.startsWith(',')) {
      rest = rest.slice(1).trimStart();
      if (rest.length === 0) break;
    } else if (rest.length > 0) {
      throw new SelectorError(`expected \`,\` between matchers at \`${rest}\``);
    }
  }
  return matchers;
}

/** A quoted string at the start of `text`: its value and how many characters it took. */
function quoted(text: string, label: string): { value: string; length: number } {
  const quote = text[0];
  if (quote !== '"' && quote !== "'") throw new SelectorError(`expected a quoted value for \`${label}\``);
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const c = text[i] as string;
    if (c === quote) return { value, length: i + 1 };
    if (c === '\n') break;
    if (c === '\\') {
      const next = text[i + 1];
      const escaped = next === undefined ? undefined : ESCAPES[next];
      if (escaped === undefined)
        throw new SelectorError(`unknown escape \`\\${next ?? ''}\` in the value of \`${label}\``);
      value += escaped;
      i++;
    } else {
      value += c;
    }
  }
  throw new SelectorError(`unterminated value for \`${label}\``);
}

function checkRegex(pattern: string, label: string): void {
  try {
    new RegExp(`^(?:${pattern})$`);
  } catch (error) {
    throw new SelectorError(
      `the regular expression for \`${label}\` does not compile: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
