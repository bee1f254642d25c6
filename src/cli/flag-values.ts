/**
 * A flag's value read by a parser of user input (a duration, a time, a scenario name).
 *
 * Contract: `flagValue(flag, parse)` gives what `parse()` returns; when it throws one of `inputErrors` (by default
 * the duration and time parsers' `ParseError`), the error becomes a one-line `UsageError` naming the flag before
 * the parser's message (`--duration: invalid duration "5x" …: expected a Prometheus duration such as 30s`).
 * That message says what the flag takes, so no help hint follows it. Any other error passes through.
 */
import { ParseError } from '../util/duration.js';
import { UsageError } from './exit-codes.js';

type ErrorClass = abstract new (...args: never[]) => Error;

export function flagValue<T>(flag: string, parse: () => T, inputErrors: readonly ErrorClass[] = [ParseError]): T {
  try {
    return parse();
  } catch (error) {
    if (inputErrors.some((kind) => error instanceof kind)) {
      throw new UsageError(`${flag}: ${(error as Error).message}`, { hint: false });
    }
    throw error;
  }
}
