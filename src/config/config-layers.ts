/**
 * The three layers a setting of `serve` can come from, each read into the same shape: the command-line
 * flags, the `WQD_` environment variables and the configuration file, every value with where it came
 * from (`--scrape-interval`, `WQD_SCRAPE_INTERVAL`, `config.yaml: scrape.interval`).
 *
 * Contract:
 * - A layer holds only the settings it gives: unset flags, empty variables and null file keys are absent.
 *   Values are raw (not yet checked; see setting-values.ts).
 * - `parseConfigFile` rejects text that is not YAML, aliases that expand past `MAX_CONFIG_ALIAS_COUNT`, a top
 *   level that is not a mapping, and keys the settings table does not know (besides the override sections),
 *   naming the first with its dotted path. Every error names the file.
 *   Unknown `WQD_` variables are ignored.
 */
import { parseDocument } from 'yaml';
import { ConfigError, describeValue } from './config-error.js';
import { flagName, OVERRIDE_SECTIONS, SETTINGS } from './service-settings.js';
import { isMapping } from './setting-values.js';

/**
 * How far YAML aliases (`*anchor`) may expand a configuration file (the yaml package's `maxAliasCount`): a file
 * that shares a few settings through anchors stays far below; a "billion laughs" of nested aliases is refused
 * before it is expanded.
 */
export const MAX_CONFIG_ALIAS_COUNT = 100;

export type Layer = {
  readonly name: 'flags' | 'env' | 'file';
  readonly values: Map<string, { raw: unknown; where: string }>;
};

export function flagLayer(flags: Readonly<Record<string, unknown>>): Layer {
  const values = new Map<string, { raw: unknown; where: string }>();
  for (const s of SETTINGS) {
    if (s.flag === undefined) continue;
    const raw = flags[s.flag];
    if (raw === undefined) continue;
    values.set(s.key, { raw, where: flagName(s.flag) });
  }
  return { name: 'flags', values };
}

export function envLayer(env: Readonly<Record<string, string | undefined>>): Layer {
  const values = new Map<string, { raw: unknown; where: string }>();
  for (const s of SETTINGS) {
    if (s.env === undefined) continue;
    const raw = env[s.env];
    // An empty variable is unset (a manifest that templates it away).
    if (raw === undefined || raw === '') continue;
    values.set(s.key, { raw, where: s.env });
  }
  return { name: 'env', values };
}

export function fileLayer(root: Record<string, unknown>, path: string): Layer {
  const values = new Map<string, { raw: unknown; where: string }>();
  for (const s of SETTINGS) {
    if (s.flagOnly === true) continue;
    const raw = lookup(root, s.key, path);
    if (raw === undefined || raw === null) continue;
    values.set(s.key, { raw, where: `${path}: ${s.key}` });
  }
  return { name: 'file', values };
}

export function parseConfigFile(text: string, path: string): Record<string, unknown> {
  const document = parseDocument(text, { prettyErrors: false });
  const firstError = document.errors[0];
  if (firstError !== undefined) throw new ConfigError(`${path}: not valid YAML: ${firstError.message}`);
  let root: unknown;
  try {
    root = document.toJS({ maxAliasCount: MAX_CONFIG_ALIAS_COUNT });
  } catch (error) {
    // The yaml package throws a ReferenceError when the aliases expand past the count (a "billion laughs").
    const reason =
      error instanceof ReferenceError
        ? `its aliases expand too far (more than ${MAX_CONFIG_ALIAS_COUNT} alias expansions)`
        : (error as Error).message;
    throw new ConfigError(`${path}: not a usable YAML document: ${reason}`);
  }
  if (root === null || root === undefined) return {};
  if (!isMapping(root)) throw new ConfigError(`${path}: expected a mapping at the top, got ${describeValue(root)}`);
  checkKeys(root, '', path);
  return root;
}

/** Rejects keys the table does not know, naming the first one with its dotted path. */
function checkKeys(mapping: Record<string, unknown>, prefix: string, path: string): void {
  const children = new Set<string>();
  for (const s of SETTINGS) {
    if (s.flagOnly === true || !s.key.startsWith(prefix)) continue;
    children.add(s.key.slice(prefix.length).split('.')[0] as string);
  }
  if (prefix === '') for (const section of OVERRIDE_SECTIONS) children.add(section);
  for (const [key, value] of Object.entries(mapping)) {
    if (!children.has(key)) {
      throw new ConfigError(`${path}: ${prefix}${key}: unknown key; expected one of ${[...children].join(', ')}`);
    }
    const isSection = SETTINGS.some((s) => s.key.startsWith(`${prefix}${key}.`));
    if (!isSection || value === null || value === undefined) continue;
    if (!isMapping(value))
      throw new ConfigError(`${path}: ${prefix}${key}: expected a mapping, got ${describeValue(value)}`);
    checkKeys(value, `${prefix}${key}.`, path);
  }
}

function lookup(root: Record<string, unknown>, key: string, path: string): unknown {
  let at: unknown = root;
  const parts = key.split('.');
  for (const [i, part] of parts.entries()) {
    if (at === undefined || at === null) return undefined;
    if (!isMapping(at)) {
      throw new ConfigError(`${path}: ${parts.slice(0, i).join('.')}: expected a mapping, got ${describeValue(at)}`);
    }
    at = at[part];
  }
  return at;
}
