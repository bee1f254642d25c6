/**
 * How a one-shot command reports a Prometheus it could not query, as one line.
 *
 * Contract: `prometheusFailureLine(where, url, error)`, `where` naming where the URL came from (`--prometheus-url`,
 * or the configuration file's key):
 * - an HTTP 404 or 405 (no such path: the URL is not the base of a Prometheus query API, or not a Prometheus at
 *   all) says that the URL did not answer as a Prometheus query API, with the request's path and status, and says
 *   which base URL to give: the URL before its `/api/v1`, or without a page of Prometheus's own web UI, when it
 *   holds one; otherwise what a base URL looks like;
 * - any other failure (the API's own error, an HTTP error such as 401 or 503, the transport) is the client's
 *   message without the expression, which is long and says nothing to the reader.
 */
import type { PrometheusApiError } from '../prometheus/prometheus-api.js';
import { redactUrl } from '../scrape/scrape-error.js';
import { oneLine } from './run-program.js';

/** Statuses of a path the server does not serve. */
const NO_SUCH_PATH = new Set([404, 405]);

/** Pages of Prometheus's web UI, which a URL copied from the browser may end with. */
const UI_PAGES = new Set(['graph', 'query', 'alerts', 'rules', 'targets', 'status', 'flags', 'config', 'tsdb-status']);

export function prometheusFailureLine(where: string, url: string, error: PrometheusApiError): string {
  if (error.kind === 'http' && error.status !== undefined && NO_SUCH_PATH.has(error.status)) {
    const path = error.request.replace(/^(\w+) [a-z]+:\/\/[^/]+/, '$1 ');
    const base = suggestedBaseUrl(url);
    const advice =
      base === undefined
        ? 'give the base URL the API paths follow, e.g. http://prometheus:9090 (Prometheus, Thanos) or https://mimir.example/prometheus (Mimir, Cortex)'
        : `give the base URL the API paths follow: ${base}`;
    return `${where} ${redactUrl(url)} did not answer as a Prometheus query API (${path} answered HTTP ${error.status}); ${advice}`;
  }
  return oneLine(error.message.replace(/ \[expr: [\s\S]*\]$/, ''));
}

/**
 * The base URL a URL that is not one most likely meant: the part before `/api/v1`, or the URL without a page of
 * the web UI at its end; undefined when it holds neither (nothing better to suggest than the URL given).
 */
export function suggestedBaseUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const segments = parsed.pathname.split('/').filter((s) => s !== '');
  const api = segments.findIndex((s, i) => s === 'api' && segments[i + 1] === 'v1');
  let kept: string[] | undefined;
  if (api >= 0) kept = segments.slice(0, api);
  else if (segments.length > 0 && UI_PAGES.has(segments[segments.length - 1] as string)) kept = segments.slice(0, -1);
  if (kept === undefined) return undefined;
  return `${parsed.origin}${kept.map((s) => `/${s}`).join('')}`;
}
