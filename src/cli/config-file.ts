/**
 * The configuration file of `--config` for the one-shot commands (`diagnose`, `calibrate`, `generate`): read as
 * `serve` reads it (config/read-config-file.ts: a regular text file within a size limit, problems named in plain
 * words), then resolved by the one loader every command shares (config/service-config.ts) under the command's
 * flags. These commands read no `WQD_` variable (`serve` does). A bad file or value is a usage error naming the
 * file and the key.
 */
import { ConfigError } from '../config/config-error.js';
import { readConfigFile, UnreadableConfigFileError } from '../config/read-config-file.js';
import { type ResolveOptions, resolveServiceConfig, type ServiceConfig } from '../config/service-config.js';
import { UsageError } from './exit-codes.js';

/** `flags.config` (when given) under `flags`; the flags are commander's attributes, as `serve` reads them. */
export async function loadCommandConfig(
  flags: Readonly<Record<string, unknown>> & { readonly config?: string | undefined },
  options: ResolveOptions = {},
): Promise<ServiceConfig> {
  const path = flags.config;
  try {
    const file = path === undefined ? undefined : { path, text: await readConfigFile(path, '--config') };
    return resolveServiceConfig({ flags, env: {}, ...(file !== undefined ? { file } : {}) }, options);
  } catch (error) {
    if (error instanceof ConfigError) throw configUsageError(error);
    throw error;
  }
}

/**
 * A configuration error as every command reports it: a usage error with the same message. A file that cannot be
 * read at all (missing, a directory, binary, too large) is the input's fault, not the call's: its one line comes
 * without the help hint.
 */
export function configUsageError(error: ConfigError): UsageError {
  return new UsageError(error.message, { hint: !(error instanceof UnreadableConfigFileError) });
}
