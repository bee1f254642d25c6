/**
 * A failure that recurs, such as the same evaluation error every interval while Prometheus refuses a query, logged
 * when it starts and when its message changes, not every time it occurs; when it ends, one line says how many times
 * it occurred.
 */

export interface RecurringFailureLog {
  failed(error: string): void;
  succeeded(): void;
}

export type FailureLogLines = {
  /** Logged (at error level) with `{ error }` when the failure starts or its message changes. */
  readonly failed: string;
  /** Logged (at info level) with `{ failures }` when it ends. */
  readonly recovered: string;
};

export function createRecurringFailureLog(
  log: { error(object: object, message: string): void; info(object: object, message: string): void },
  lines: FailureLogLines,
): RecurringFailureLog {
  let logged: string | undefined;
  let failures = 0;
  return {
    failed(error) {
      failures++;
      if (error === logged) return;
      logged = error;
      log.error(failures === 1 ? { error } : { error, failuresSoFar: failures }, lines.failed);
    },
    succeeded() {
      if (failures > 0) log.info({ failures }, lines.recovered);
      logged = undefined;
      failures = 0;
    },
  };
}
