/**
 * What the request log may say about a request: no credential, at any level.
 *
 * Contract: a logged `url` (and the `url` of a logged `req`) has the value of every query parameter whose name
 * speaks of a credential (`token`, `access_token`, `password`, `secret`, `key`, `auth`, `session`, in any case
 * and as part of a longer name) replaced by `<secret>`, and every occurrence of the service's own API token,
 * wherever in the URL, too. A logged `req` names the method, the URL so cleaned and the client address; never a
 * header, so neither `Authorization` nor `Cookie`.
 */
import type { FastifyRequest } from 'fastify';
import { SECRET_PLACEHOLDER, withoutCredentials } from '../scrape/scrape-error.js';

const CREDENTIAL_PARAMETER = /token|passw|secret|key|auth|session/i;

/** pino serializers for the request log (see the module contract); `secrets` are the service's own. */
export function requestLogSerializers(secrets: readonly string[]): Record<string, (value: unknown) => unknown> {
  const url = (value: unknown): unknown => (typeof value === 'string' ? loggableUrl(value, secrets) : value);
  return {
    url,
    req: (value: unknown): unknown => {
      const request = value as Partial<Pick<FastifyRequest, 'method' | 'url' | 'ip'>> | null;
      if (typeof request !== 'object' || request === null) return value;
      return { method: request.method, url: url(request.url), remoteAddress: request.ip };
    },
  };
}

/** `url` (a request target: path and query) without credentials (see the module contract). */
export function loggableUrl(url: string, secrets: readonly string[] = []): string {
  const query = url.indexOf('?');
  const cleaned =
    query === -1
      ? url
      : `${url.slice(0, query)}?${url
          .slice(query + 1)
          .split('&')
          .map((parameter) => {
            const eq = parameter.indexOf('=');
            const name = eq === -1 ? parameter : parameter.slice(0, eq);
            return eq !== -1 && CREDENTIAL_PARAMETER.test(decoded(name)) ? `${name}=${SECRET_PLACEHOLDER}` : parameter;
          })
          .join('&')}`;
  return secrets.length === 0 ? cleaned : withoutCredentials(cleaned, secrets);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
