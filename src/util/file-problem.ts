/** A file system error in plain words, for messages that name the file themselves (never an errno dump). */
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
