/**
 * Files named on the command line, read for a command: every failure is a `UsageError` that names the flag
 * and the path in plain words (no such file, a directory, not readable, not a text file), never an errno dump
 * and never the file's bytes.
 */
import { readFile, stat } from 'node:fs/promises';
import { UsageError } from './exit-codes.js';

/** How much of a file is checked for binary content (NUL bytes, invalid UTF-8). */
const SNIFF_BYTES = 64 * 1024;

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
  if (!isText(bytes.subarray(0, SNIFF_BYTES))) throw new UsageError(`${where}: not a text file (binary content)`);
  return bytes.toString('utf8');
}

/** A file system error in plain words. */
export function fileProblem(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return 'no such file';
    case 'ENOTDIR':
      return 'no such file (a part of the path is not a directory)';
    case 'EISDIR':
      return 'is a directory, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    case 'ELOOP':
      return 'too many symbolic links';
    default:
      return 'cannot be read';
  }
}

/** No NUL byte and valid UTF-8 (a sequence cut at the end of the sniffed prefix is allowed). */
function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}
