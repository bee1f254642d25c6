/**
 * A configuration file that cannot be used. The message names the file and the key (as a dotted path,
 * e.g. `rules.WorkqueueBacklog.thresholds.minDepth`) and says what was expected; the CLI reports it as
 * a usage error.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
