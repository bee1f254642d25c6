/**
 * A configuration file that cannot be used. The message names the file and the key (as a dotted path,
 * e.g. `rules.WorkqueueBacklog.thresholds.minDepth`) and says what was expected; the CLI reports it as
 * a usage error.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** How a configuration value reads in an error message: `null`, `nothing` (undefined), `a list`, `a mapping`, a quoted string, a number. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
