/**
 * How a browser gets past `--api-token-file` on the page: it posts the token once to `/login` (a form on the
 * 401 page); the service compares it in constant time and answers with a session cookie. The cookie holds no
 * token: an expiry and an HMAC of it keyed by the token (`<expiry>.<base64url mac>`), so a cookie is only as
 * good as its expiry, and every session ends when the token changes (the service restarts with another
 * file). `HttpOnly`, `SameSite=Strict`, `Path=/`; `Secure` when the request came over HTTPS.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'wqd_session';
/** How long a session lasts. */
export const SESSION_TTL_MS = 12 * 60 * 60_000;

export interface PageSessions {
  /** Whether `given` is the token (constant time, over SHA-256 digests: the length does not leak either). */
  tokenMatches(given: string): boolean;
  /** A `Set-Cookie` value for a new session. */
  issue(secure: boolean, nowMs?: number): string;
  /** Whether the `Cookie` header holds a valid, unexpired session. */
  valid(cookieHeader: string | undefined, nowMs?: number): boolean;
  /** A `Set-Cookie` value that ends the session. */
  clear(secure: boolean): string;
}

export function pageSessions(token: string): PageSessions {
  const expected = digest(token);
  const mac = (expiry: string): Buffer =>
    createHmac('sha256', token).update(`workqueue-doctor page session ${expiry}`).digest();
  const attributes = (secure: boolean): string => `Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
  return {
    tokenMatches: (given) => timingSafeEqual(digest(given), expected),
    issue(secure, nowMs = Date.now()) {
      const expiry = String(Math.floor((nowMs + SESSION_TTL_MS) / 1000));
      const value = `${expiry}.${mac(expiry).toString('base64url')}`;
      return `${SESSION_COOKIE}=${value}; Max-Age=${SESSION_TTL_MS / 1000}; ${attributes(secure)}`;
    },
    valid(cookieHeader, nowMs = Date.now()) {
      const value = cookieValue(cookieHeader, SESSION_COOKIE);
      const match = value === undefined ? null : /^([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
      // Always compute and compare, so a malformed cookie takes as long as a wrong one.
      const expiry = match?.[1] ?? '0';
      // 43 base64url characters are 32 bytes, the MAC's length.
      const given = match === null ? Buffer.alloc(32) : Buffer.from(match[2] as string, 'base64url');
      const same = timingSafeEqual(given, mac(expiry));
      return match !== null && same && Number(expiry) * 1000 > nowMs;
    },
    clear: (secure) => `${SESSION_COOKIE}=; Max-Age=0; ${attributes(secure)}`,
  };
}

/** The value of cookie `name` in a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
