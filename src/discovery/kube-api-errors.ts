/**
 * Failures of the Kubernetes API as pod discovery reports them: one line naming what was being done,
 * the HTTP status and the API server's own message when there was a response, the error's text (and
 * code) otherwise.
 */
export interface DiscoveryError {
  message: string;
  /** Epoch milliseconds. */
  at: number;
  /** HTTP status from the API server, when there was one. */
  status?: number;
}

/** `err` as a status entry: `<what>: HTTP <status>: <the API server's message>` or `<what>: <error text>`. */
export function describeError(err: unknown, what: string, at: number): DiscoveryError {
  const e = (err ?? {}) as { statusCode?: unknown; code?: unknown; body?: unknown; message?: unknown };
  const status =
    typeof e.statusCode === 'number' ? e.statusCode : typeof e.code === 'number' ? (e.code as number) : undefined;
  if (status !== undefined) {
    const reason = apiStatusMessage(e.body);
    const text = typeof e.message === 'string' && !e.message.startsWith('HTTP-Code') ? e.message : '';
    return {
      message: `${what}: HTTP ${status}${reason ? `: ${reason}` : text ? ` ${text}` : ''}`,
      at,
      status,
    };
  }
  return { message: `${what}: ${errorText(err)}`, at };
}

/** The `message` of a Kubernetes `Status` body (object or JSON text). */
function apiStatusMessage(body: unknown): string {
  let b = body;
  if (typeof body === 'string') {
    try {
      b = JSON.parse(body);
    } catch {
      return body.slice(0, 200);
    }
  }
  if (typeof b === 'object' && b !== null && typeof (b as { message?: unknown }).message === 'string') {
    return (b as { message: string }).message;
  }
  return '';
}

/** An error's message, with its code (e.g. `ECONNREFUSED`) when the message does not name it. */
export function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
