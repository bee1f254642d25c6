/**
 * The API token (`api.tokenFile`: `--api-token-file`, `WQD_API_TOKEN_FILE` or the file's `api.tokenFile`): read
 * once at start, surrounding whitespace removed, and refused when shorter than `MIN_API_TOKEN_BYTES`, so that
 * guessing it is hopeless even without the sign-in throttle.
 */
import { ConfigError } from '../config/config-error.js';
import type { ServiceConfig } from '../config/service-config.js';
import { readSecret } from './source-factory.js';

/** 16 bytes: 128 bits when random, as `openssl rand -hex 16` makes (32 characters). */
export const MIN_API_TOKEN_BYTES = 16;

/** Why `token` cannot be the API token, or undefined when it can. */
export function apiTokenProblem(token: string): string | undefined {
  const bytes = Buffer.byteLength(token, 'utf8');
  return bytes >= MIN_API_TOKEN_BYTES
    ? undefined
    : `the API token is ${bytes} bytes long; it must be at least ${MIN_API_TOKEN_BYTES} (e.g. the output of \`openssl rand -hex 16\`)`;
}

/** The token of `config.apiTokenFile`, if set; a `ConfigError` naming where it was set when unreadable, empty or short. */
export async function readApiToken(
  config: Pick<ServiceConfig, 'apiTokenFile' | 'origins'>,
): Promise<string | undefined> {
  if (config.apiTokenFile === undefined) return undefined;
  const token = await readSecret(config, 'api.tokenFile', config.apiTokenFile);
  const problem = apiTokenProblem(token);
  if (problem !== undefined) {
    throw new ConfigError(
      `${config.origins['api.tokenFile'] ?? 'api.tokenFile'}: ${JSON.stringify(config.apiTokenFile)}: ${problem}`,
    );
  }
  return token;
}
