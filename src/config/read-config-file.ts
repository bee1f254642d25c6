/**
 * Reading a configuration file (`--config`, `WQD_CONFIG`) within bounds: every command's configuration comes from
 * a file a person writes, a few kilobytes; anything else is refused before it costs memory.
 *
 * Contract: `readConfigFile(path, where)` gives the file's text, or throws a one-line `UnreadableConfigFileError`
 * (a `ConfigError`) `<where>: cannot read "<path>": <reason>` where the reason is in plain words: no such file,
 * permission denied, a directory or a FIFO (only regular files are read, symbolic links followed: a mounted
 * ConfigMap is one), larger than `MAX_CONFIG_FILE_BYTES` (checked before reading and while reading), not a text
 * file (binary content). Nothing of the file's content is quoted.
 */
import { fileProblem } from '../util/file-problem.js';
import { FileRefusal, readRegularFile } from '../util/regular-file.js';
import { looksLikeText } from '../util/text-content.js';
import { ConfigError } from './config-error.js';

/** The largest configuration file read: the example with every key documented is under 10 KiB. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** A configuration file that could not be read at all: the file given is at fault, not a key in it. */
export class UnreadableConfigFileError extends ConfigError {}

export async function readConfigFile(path: string, where: string): Promise<string> {
  const fail = (reason: string): ConfigError =>
    new UnreadableConfigFileError(`${where}: cannot read ${JSON.stringify(path)}: ${reason}`);
  let bytes: Buffer;
  try {
    bytes = await readRegularFile(path, { maxBytes: MAX_CONFIG_FILE_BYTES, followSymlinks: true });
  } catch (error) {
    if (error instanceof FileRefusal) {
      throw fail(error.kind === 'too-large' ? `${error.message}, the limit of a configuration file` : error.message);
    }
    throw fail(fileProblem(error));
  }
  if (!looksLikeText(bytes)) throw fail('not a text file (binary content)');
  return bytes.toString('utf8');
}
