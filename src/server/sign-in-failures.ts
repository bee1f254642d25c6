/**
 * Failed sign-ins summed up instead of logged one by one, so that a client guessing tokens cannot fill the log.
 *
 * Contract: the first failure after a quiet spell opens a window of `windowMs`; at its end, or at `flush()` (when
 * the server closes), one line is logged: how many attempts had a wrong token (`wrongToken`), how many the
 * throttle refused (`throttled`), from how many clients (`clients`), and the clients with the most attempts (at
 * most `SHOWN_CLIENTS`, by address). Clients are counted one by one up to `TRACKED_CLIENTS`; beyond that, in the
 * totals only (and `clients` says `TRACKED_CLIENTS`). Nothing is logged for a window without failures, and no timer
 * runs between windows.
 */

/** Clients named in a summary line. */
const SHOWN_CLIENTS = 5;
/** Clients counted one by one in a window. */
const TRACKED_CLIENTS = 1_000;
/** How long failures are summed before they are logged. */
export const SIGN_IN_SUMMARY_WINDOW_MS = 60_000;

export interface SignInFailures {
  wrongToken(client: string): void;
  throttled(client: string): void;
  /** Logs what the current window holds now and closes it. */
  flush(): void;
}

export type SummaryLog = (entry: Record<string, unknown>, message: string) => void;

export function createSignInFailures(log: SummaryLog, windowMs: number = SIGN_IN_SUMMARY_WINDOW_MS): SignInFailures {
  let wrongToken = 0;
  let throttled = 0;
  const attemptsBy = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;

  const flush = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (wrongToken + throttled === 0) return;
    const top = [...attemptsBy]
      .sort((a, b) => b[1] - a[1])
      .slice(0, SHOWN_CLIENTS)
      .map(([client, attempts]) => ({ client, attempts }));
    log(
      { wrongToken, throttled, clients: attemptsBy.size, top, windowSeconds: windowMs / 1000 },
      'page sign-in: attempts with a wrong token',
    );
    wrongToken = 0;
    throttled = 0;
    attemptsBy.clear();
  };

  const count = (client: string): void => {
    const known = attemptsBy.get(client);
    if (known !== undefined || attemptsBy.size < TRACKED_CLIENTS) attemptsBy.set(client, (known ?? 0) + 1);
    if (timer === undefined) {
      timer = setTimeout(flush, windowMs);
      timer.unref();
    }
  };

  return {
    wrongToken(client) {
      wrongToken++;
      count(client);
    },
    throttled(client) {
      throttled++;
      count(client);
    },
    flush,
  };
}
