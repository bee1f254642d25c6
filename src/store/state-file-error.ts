/**
 * Why a state file was not read (state-file.ts): not such a file, another version of the format, damaged, or
 * beyond the limits of this service (state-file-limits.ts: its size, its series, their labels, a sample's time).
 */
export type StateFileProblem = 'foreign' | 'version' | 'damaged' | 'limits';

export class StateFileError extends Error {
  override readonly name = 'StateFileError';
  readonly problem: StateFileProblem;
  /** For a file refused for its decompressed size: how many decompressed bytes had been read when it was. */
  readonly contentBytesRead: number | undefined;
  constructor(problem: StateFileProblem, message: string, details: { readonly contentBytesRead?: number } = {}) {
    super(message);
    this.problem = problem;
    this.contentBytesRead = details.contentBytesRead;
  }
}
