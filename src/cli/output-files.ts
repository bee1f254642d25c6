/**
 * Files a command writes where a flag says (`simulate --record`, `diagnose --record`, `generate --out`).
 *
 * Contract: `writeProblem(path, error)` says in plain words why a write (or a directory's creation) of `path`
 * failed and what to do, never an errno dump: for a missing part of the path it names the directory that does not
 * exist, or the file that stands where a directory should be, instead of blaming `path` itself.
 * `cannotWrite(flag, path, error)` is the one-line `UsageError` of such a failure, naming the flag and the path;
 * the call was right, so no help hint follows.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError } from './exit-codes.js';

/** Whether `error` is the file system's (it carries an errno code), as opposed to a bug. */
export function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
}

export function cannotWrite(flag: string, path: string, error: unknown): UsageError {
  return new UsageError(`${flag} ${path}: cannot write: ${writeProblem(path, error)}`, { hint: false });
}

export function writeProblem(path: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return missingDirectoryProblem(dirname(path));
    case 'EISDIR':
      return 'it is a directory: give a file name';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied: give a path you can write to';
    case 'EROFS':
      return 'the file system is read-only: give a path on a writable one';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'no space left on the device';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    default:
      return `the file system refused it${code === undefined ? '' : ` (${code})`}`;
  }
}

/** Why `directory` cannot hold a new file: it does not exist, or an ancestor of it is a file. */
function missingDirectoryProblem(directory: string): string {
  for (let dir = directory; ; dir = dirname(dir)) {
    const kind = entryKind(dir);
    if (kind === 'file') return `${dir} is a file, not a directory: give a path in a directory`;
    if (kind === 'directory') {
      return dir === directory
        ? 'a part of the path is missing'
        : `the directory ${directory} does not exist: create it first, or give a path in an existing directory`;
    }
    if (dirname(dir) === dir) return `the directory ${directory} does not exist`;
  }
}

function entryKind(path: string): 'directory' | 'file' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing';
  }
}
