/**
 * Label sets, series keys and label matchers.
 *
 * A `Labels` object maps label names to non-empty values (PromQL treats an empty value as an absent
 * label, so parsers and stores drop them). They are plain objects (cheap, sharing hidden classes),
 * with a label called `__proto__` stored as an own property. A label may legally be called
 * `constructor` or `toString`: read a name that is not known in advance with `labelValue`.
 *
 * A series key is the canonical text of a series: `name{a="x",b="y"}`, label values escaped as in
 * the exposition formats (`\\`, `\"`, `\n`), labels in canonical order: by name, except that `le`
 * and `quantile` come after every other label. The Go client prints its labels in exactly that
 * order, so for its pages the key is the sample line's own text and needs no re-encoding.
 */
import { LABEL } from '../metrics/names.js';

export type Labels = Readonly<Record<string, string>>;

/** A PromQL label matcher; regular expressions are fully anchored, as in PromQL. */
export type LabelMatcher = { readonly label: string; readonly op: '=' | '!=' | '=~' | '!~'; readonly value: string };

/** Orders label names canonically: by name, with `le` and `quantile` after all others. */
export function compareLabelNames(a: string, b: string): number {
  const ra = a === LABEL.le || a === LABEL.quantile ? 1 : 0;
  const rb = b === LABEL.le || b === LABEL.quantile ? 1 : 0;
  if (ra !== rb) return ra - rb;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The value of label `name`, `undefined` when absent (safe for any name, `constructor` included). */
export function labelValue(labels: Labels, name: string): string | undefined {
  return Object.hasOwn(labels, name) ? labels[name] : undefined;
}

/** Sets a label on an object being built (a `__proto__` label becomes an own property). */
export function setLabel(out: Record<string, string>, name: string, value: string): void {
  if (name === '__proto__') {
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  } else {
    out[name] = value;
  }
}

/** A label object from name/value pairs; empty values are dropped, names sorted canonically. */
export function makeLabels(entries: Iterable<readonly [string, string]>): Labels {
  const pairs = [...entries].filter(([, v]) => v !== '');
  pairs.sort((x, y) => compareLabelNames(x[0], y[0]));
  const out: Record<string, string> = {};
  for (const [k, v] of pairs) setLabel(out, k, v);
  return out;
}

/** `makeLabels` from a plain record. */
export function labelsOf(record: Readonly<Record<string, string>>): Labels {
  return makeLabels(Object.entries(record));
}

const ESCAPE_NEEDED = /[\\"\n]/;

/** Escapes a label value for the exposition formats and series keys. */
export function escapeLabelValue(value: string): string {
  if (!ESCAPE_NEEDED.test(value)) return value;
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** The series key of a metric name and labels (see the module comment). */
export function seriesKey(name: string, labels: Labels): string {
  const names = Object.keys(labels).sort(compareLabelNames);
  let key = name;
  let first = true;
  for (const n of names) {
    const v = labels[n];
    if (v === undefined || v === '') continue;
    key += `${first ? '{' : ','}${n}="${escapeLabelValue(v)}"`;
    first = false;
  }
  return first ? key : `${key}}`;
}

/** The metric name of a series key. */
export function keyMetricName(key: string): string {
  const brace = key.indexOf('{');
  return brace === -1 ? key : key.slice(0, brace);
}

/**
 * The labels of a series key. The key must come from `seriesKey` or the parser (well-formed);
 * anything else gives unspecified labels.
 */
export function keyLabels(key: string): Labels {
  const out: Record<string, string> = {};
  let i = key.indexOf('{');
  if (i === -1) return out;
  i++;
  const end = key.length - 1;
  while (i < end) {
    const eq = key.indexOf('=', i);
    const name = key.slice(i, eq);
    let j = eq + 2;
    let value = '';
    let start = j;
    for (;;) {
      const c = key.charCodeAt(j);
      if (c === 0x22) break;
      if (c === 0x5c) {
        value += key.slice(start, j);
        const e = key.charCodeAt(j + 1);
        value += e === 0x6e ? '\n' : key[j + 1];
        j += 2;
        start = j;
        continue;
      }
      j++;
    }
    value += key.slice(start, j);
    setLabel(out, name, value);
    i = j + 2;
  }
  return out;
}

/** The same labels without the given names. */
export function withoutLabels(labels: Labels, removed: readonly string[]): Labels {
  const out: Record<string, string> = {};
  for (const name of Object.keys(labels)) {
    if (!removed.includes(name)) setLabel(out, name, labels[name] as string);
  }
  return out;
}

/** Only the given names (those present). */
export function onlyLabels(labels: Labels, kept: readonly string[]): Labels {
  const pairs: [string, string][] = [];
  for (const name of kept) {
    const v = labelValue(labels, name);
    if (v !== undefined && v !== '') pairs.push([name, v]);
  }
  return makeLabels(pairs);
}

function _sortedPairs(labels: Labels, name: string | undefined): string[] {
  const names = Object.keys(labels);
  if (name !== undefined) names.push(LABEL.metricName);
  names.sort();
  const out: string[] = [];
  for (const n of names) out.push(n, n === LABEL.metricName && name !== undefined ? name : (labels[n] as string));
  return out;
}

/** A compiled matcher list: call with a metric name's labels (empty value when absent). */
export type CompiledMatchers = (labels: Labels) => boolean;

/**
 * Compiles matchers with PromQL semantics: an absent label has the value `""`, so `{a=""}` matches
 * series without `a`; regular expressions are anchored at both ends. Matchers on `__name__` are
 * not handled here (the metric name is selected separately). Throws a `SyntaxError` on a bad regex.
 */
export function compileMatchers(matchers: readonly LabelMatcher[]): CompiledMatchers {
  if (matchers.length === 0) return () => true;
  const tests = matchers.map((m): ((labels: Labels) => boolean) => {
    const name = m.label;
    switch (m.op) {
      case '=':
        return (l) => (labelValue(l, name) ?? '') === m.value;
      case '!=':
        return (l) => (labelValue(l, name) ?? '') !== m.value;
      case '=~': {
        const re = new RegExp(`^(?:${m.value})$`, 's');
        return (l) => re.test(labelValue(l, name) ?? '');
      }
      case '!~': {
        const re = new RegExp(`^(?:${m.value})$`, 's');
        return (l) => !re.test(labelValue(l, name) ?? '');
      }
      default:
        throw new SyntaxError(`unknown matcher operator ${JSON.stringify(m.op)}`);
    }
  });
  return (labels) => {
    for (const t of tests) if (!t(labels)) return false;
    return true;
  };
}
