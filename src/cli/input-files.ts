/**
 * Files named on the command line, read for a command: every failure is a `UsageError` that names the flag
 * and the path in plain words (no such file, a directory, not readable, not a text file), never an errno dump
 * and never the file's bytes.
 */
import { readFile, stat } from 'node:fs/promises';
import { fileProblem } from '../util/file-problem.js';
import { looksLikeText } from '../util/text-content.js';
import { UsageError } from './exit-codes.js';

export { fileProblem };

/** Reads a UTF-8 text file given as `flag`; rejects with a one-line `UsageError` naming the path. */
export async function readTextFile(path: string, flag: string): Promise<string> {
  const where = `${flag} ${path}`;
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    throw new UsageError(`${where}: ${fileProblem(error)}`);
  }
  if (info.isDirectory()) throw new UsageError(`${where}: is a directory, not a file`);
  if (!info.isFile()) throw new UsageError(`${where}: is not a regular file`);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new UsageError(`${where}: ${fileProblem(error)}`);
  }
  if (!looksLikeText(bytes)) throw new UsageError(`${where}: not a text file (binary content)`);
  return bytes.toString('utf8');
}
