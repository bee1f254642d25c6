/**
 * Exit codes shared by every command.
 * 0: nothing counted by the failure threshold; 1: at least one counted finding (or a stale generated file);
 * 2: nothing could be done (usage error, unreadable input, unreachable targets, a source without work queues);
 * 3: no counted finding, but a rule could not be judged for lack of data (`diagnose`: unknown counted).
 */
export const EXIT = { ok: 0, findings: 1, usage: 2, unknown: 3 } as const;

/**
 * A problem with how the command was called or with its inputs; reported as one line without a stack trace,
 * exit 2. `hint: false` leaves out the "see --help" line, so the report is that one line: when the call was
 * right and the input was not (a target that cannot be scraped, a file that cannot be read or written), or when
 * the message itself says what the flag takes (the accepted values or format), which the help would only repeat.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly hint: boolean;
  constructor(message: string, options: { hint?: boolean } = {}) {
    super(message);
    this.hint = options.hint ?? true;
  }
}
