/**
 * Test helpers for Prometheus text exposition: a small reader of the format (enough for work-queue
 * pages: HELP, TYPE, samples with quoted label values), and `promtool check metrics`.
 */
import { spawnSync } from 'node:child_process';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  help?: string;
  type?: string;
  readonly samples: Sample[];
}

function parseValue(text: string): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (text === 'NaN') return Number.NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`not a sample value: ${text}`);
  return value;
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    const name = text.slice(i, eq).trim();
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in {${text}}`);
    let value = '';
    let j = eq + 2;
    for (; text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        j++;
        value += text[j] === 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
  }
  return labels;
}

/** Families by name; samples of a histogram (`_bucket`, `_sum`, `_count`) belong to its family. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let found = families.get(name);
    if (found === undefined) {
      found = { name, samples: [] };
      families.set(name, found);
    }
    return found;
  };
  const familyOfSample = (sampleName: string): Family => {
    for (const suffix of ['_bucket', '_sum', '_count']) {
      const base = sampleName.slice(0, -suffix.length);
      if (sampleName.endsWith(suffix) && families.get(base)?.type === 'histogram') return family(base);
    }
    return family(sampleName);
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line === '# EOF') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta !== null) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (kind === 'HELP') family(name).help = rest.replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      else family(name).type = rest;
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \S+)?$/.exec(line);
    if (sample === null) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, valueText] = sample as unknown as [string, string, string | undefined, string];
    familyOfSample(name).samples.push({ name, labels: parseLabels(labelText ?? ''), value: parseValue(valueText) });
  }
  return families;
}

export const PROMTOOL_MISSING = 'promtool not found: install Debian package prometheus (apt-get install prometheus)';

/** Runs `promtool check metrics` on `text`; returns its exit status and combined output. */
export function promtoolCheckMetrics(text: string): { status: number | null; output: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (result.error !== undefined) {
    if ((result.error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(PROMTOOL_MISSING);
    throw result.error;
  }
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}
