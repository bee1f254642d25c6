/**
 * Typed, coded errors for HTTP fetches of metrics pages (and the transport under the Prometheus API client).
 *
 * The message always names the method, the URL (credentials removed) and the cause, for example
 * `GET http://127.0.0.1:8080/metrics: HTTP 500 Internal Server Error`.
 */

export type ScrapeErrorCode =
  /** The whole exchange (connect, headers, body) took longer than `timeoutMs`. */
  | 'timeout'
  /** The uncompressed body (or its declared length) passed `maxBytes`. */
  | 'too_large'
  /** The server answered with a non-2xx status. */
  | 'http_status'
  /** TCP-level failure: refused, reset, unreachable, DNS, malformed HTTP. */
  | 'connection'
  /** TLS handshake or certificate verification failed. */
  | 'tls'
  /** The body could not be decompressed, or its content-encoding is not supported. */
  | 'decompress'
  /** The bearer token file could not be read (or is empty). */
  | 'auth_file'
  /** The CA file could not be read. */
  | 'ca_file'
  /** The URL is not a valid http(s) URL. */
  | 'invalid_url'
  /** The caller's AbortSignal fired. */
  | 'aborted';

export interface ScrapeErrorDetails {
  /** HTTP status, for `http_status`. */
  status?: number;
  /** Bytes of (uncompressed) body read before the failure. */
  bytes?: number;
  /** Start of the response body (up to a few KB), for `http_status`. */
  bodySnippet?: string;
  /** The underlying error. */
  cause?: unknown;
}

export class ScrapeError extends Error {
  override readonly name = 'ScrapeError';
  readonly code: ScrapeErrorCode;
  readonly url: string;
  readonly method: string;
  readonly status: number | undefined;
  readonly bytes: number | undefined;
  readonly bodySnippet: string | undefined;

  constructor(code: ScrapeErrorCode, method: string, url: string, cause: string, details: ScrapeErrorDetails = {}) {
    const safeUrl = redactUrl(url);
    super(`${method} ${safeUrl}: ${cause}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.url = safeUrl;
    this.method = method;
    this.status = details.status;
    this.bytes = details.bytes;
    this.bodySnippet = details.bodySnippet;
  }
}

export function isScrapeError(err: unknown): err is ScrapeError {
  return err instanceof ScrapeError;
}

/** The URL without user:password. Unparseable input is returned unchanged. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === '' && u.password === '') return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

/** What replaces a credential, as Prometheus writes it. */
export const SECRET_PLACEHOLDER = '<secret>';

/** An echoed `Authorization` value: its scheme kept, the credential after it removed. */
const CREDENTIAL = /\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]+/gi;
/** The user information of a URL (`scheme://user:password@`). */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/?#@\s"'<>]*@/gi;

/** Shorter secrets are not searched for: they would match ordinary text. */
export const MIN_SECRET_CHARS = 4;

/**
 * `text` (an excerpt of what a target or server answered) without credentials: each of `secrets` (values of
 * `MIN_SECRET_CHARS` or more, longest first, so a token inside a longer value is not left half-replaced), any
 * `Bearer` or `Basic` credential, and the user information of URLs, replaced by `<secret>`.
 */
export function withoutCredentials(text: string, secrets: readonly string[] = []): string {
  let out = text;
  const known = secrets.filter((secret) => secret.length >= MIN_SECRET_CHARS).sort((a, b) => b.length - a.length);
  for (const secret of known) out = out.split(secret).join(SECRET_PLACEHOLDER);
  return out
    .replace(CREDENTIAL, (_m, scheme: string, blank: string) => `${scheme}${blank}${SECRET_PLACEHOLDER}`)
    .replace(URL_USERINFO, (_m, scheme: string) => `${scheme}${SECRET_PLACEHOLDER}@`);
}

/** The password (and user) of a URL, for `withoutCredentials`. */
export function urlCredentials(url: string): string[] {
  try {
    const u = new URL(url);
    return [decodeURIComponent(u.password), u.password, decodeURIComponent(u.username), u.username].filter(
      (part) => part !== '',
    );
  } catch {
    return [];
  }
}

/**
 * What of a URL's user information is secret: the password as written and decoded, and the `Basic` credential
 * the request sends for it. Not the user alone, which names ordinary things.
 */
export function urlSecrets(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  if (u.password === '') return [];
  const decode = (part: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const basic = Buffer.from(`${decode(u.username)}:${decode(u.password)}`).toString('base64');
  return [decode(u.password), u.password, basic];
}
