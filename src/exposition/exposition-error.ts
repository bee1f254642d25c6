/**
 * The one error a malformed exposition (or recording) produces. `line` and `column` are 1-based;
 * `column` counts UTF-16 code units from the start of the line. The message reads like
 * Prometheus's own parser errors, prefixed with the position: `line 3, column 17: expected equal, got "x"`.
 * Limit violations (size, series count) use line 0 when no line is to blame.
 */
export class ExpositionError extends Error {
  readonly line: number;
  readonly column: number;
  /** The message without the position prefix. */
  readonly reason: string;

  constructor(reason: string, line: number, column: number, source?: string) {
    const where = line > 0 ? `line ${line}, column ${column}: ` : '';
    super(`${source !== undefined ? `${source}: ` : ''}${where}${reason}`);
    this.name = 'ExpositionError';
    this.reason = reason;
    this.line = line;
    this.column = column;
  }
}

export function isExpositionError(err: unknown): err is ExpositionError {
  return err instanceof ExpositionError;
}
