/**
 * Fetches one `/metrics` page. The body is returned as text for the exposition parser; this module
 * does not parse it.
 *
 * Contract:
 * - Content negotiation prefers OpenMetrics 1.0.0, then the Prometheus text format 0.0.4 (the
 *   header Prometheus itself sends, minus protobuf). `format` says which one the server chose.
 * - `Accept-Encoding: gzip`; gzip, deflate and br bodies are decompressed as a stream and the
 *   scrape fails with `too_large` as soon as the uncompressed body passes `maxBytes`.
 * - `timeoutMs` bounds the whole scrape (connect, TLS, headers, body); keep it below the interval.
 * - `bearerTokenFile` is re-read when the file changes (inode, size or mtime), so rotated
 *   service-account tokens are picked up; kubebuilder's secure metrics endpoint
 *   (`https://…:8443/metrics`) authorizes the pod's token at `SERVICE_ACCOUNT_TOKEN_FILE`.
 * - Every failure rejects with a `ScrapeError` whose `code` says what went wrong and whose message
 *   names the URL and the cause, e.g. `GET http://127.0.0.1:8080/metrics: HTTP 500 Internal Server Error`.
 */
import { packageVersion } from '../util/version.js';
import { readTokenFile } from './file-cache.js';
import { type HttpAgents, httpRequest } from './http-transport.js';
import { ScrapeError } from './scrape-error.js';

export type { ScrapeErrorCode } from './scrape-error.js';
export { isScrapeError, ScrapeError } from './scrape-error.js';

/** What Prometheus 2.x sends, without the protobuf alternative. */
export const SCRAPE_ACCEPT_HEADER =
  'application/openmetrics-text;version=1.0.0;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

/** Where Kubernetes mounts the pod's service-account token. */
export const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

let cachedUserAgent: string | undefined;

/** `workqueue-doctor/<version>`. */
export function userAgent(): string {
  cachedUserAgent ??= `workqueue-doctor/${packageVersion()}`;
  return cachedUserAgent;
}

export interface ScrapeTargetRef {
  /** An http:// or https:// URL. */
  url: string;
}

export interface FetchMetricsOptions {
  /** Bound on the whole scrape, in milliseconds. */
  timeoutMs: number;
  /** Bound on the uncompressed body, in bytes. */
  maxBytes: number;
  /** Sent as `Authorization: Bearer …`. Ignored when `bearerTokenFile` is set. */
  bearerToken?: string;
  /** File holding the bearer token; re-read when it changes. */
  bearerTokenFile?: string;
  /** PEM CA bundle to verify the server with (https only). */
  caFile?: string;
  /** Skip server certificate verification (https only). */
  insecureSkipVerify?: boolean;
  /** Extra request headers; they override the defaults except `Authorization` from a token. */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** Keep-alive agents; the process-wide ones by default. */
  agents?: HttpAgents;
}

export type ExpositionFormat = 'openmetrics' | 'prometheus-text';

export interface FetchedPage {
  /**
   * The uncompressed body, decoded as UTF-8 (invalid sequences as U+FFFD, without a leading byte order mark);
   * decoded when first read.
   */
  readonly body: string;
  /** The uncompressed body as received: a large page goes to the parse worker as bytes, never decoded here. */
  readonly raw: Buffer;
  /** The response's Content-Type ('' when absent). */
  contentType: string;
  format: ExpositionFormat;
  /** Uncompressed body size. */
  bytes: number;
  /** Body size on the wire. */
  compressedBytes: number;
  durationMs: number;
  status: number;
}

/** The exposition format a Content-Type announces: OpenMetrics when it says so, the text format otherwise. */
export function formatFromContentType(contentType: string): ExpositionFormat {
  const mediaType = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/openmetrics-text' ? 'openmetrics' : 'prometheus-text';
}

export async function fetchMetricsPage(target: ScrapeTargetRef, options: FetchMetricsOptions): Promise<FetchedPage> {
  const headers: Record<string, string> = {
    Accept: SCRAPE_ACCEPT_HEADER,
    'Accept-Encoding': 'gzip',
    'User-Agent': userAgent(),
    ...options.headers,
  };
  const token = await bearerToken(target.url, options);
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;

  const res = await httpRequest(target.url, {
    method: 'GET',
    headers,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes,
    ...(options.caFile !== undefined ? { caFile: options.caFile } : {}),
    ...(options.insecureSkipVerify !== undefined ? { insecureSkipVerify: options.insecureSkipVerify } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.agents !== undefined ? { agents: options.agents } : {}),
  });

  if (res.status < 200 || res.status >= 300) {
    const snippet = res.body.subarray(0, BODY_SNIPPET_BYTES).toString('utf8');
    throw new ScrapeError('http_status', 'GET', target.url, `HTTP ${res.status} ${res.statusText}`.trimEnd(), {
      status: res.status,
      bytes: res.bytes,
      bodySnippet: snippet,
    });
  }
  const contentType = String(res.headers['content-type'] ?? '');
  const raw = res.body;
  let decoded: string | undefined;
  return {
    get body() {
      // As the parser's own decoding of bytes: invalid sequences as U+FFFD, a leading byte order mark dropped.
      decoded ??= new TextDecoder('utf-8').decode(raw);
      return decoded;
    },
    raw,
    contentType,
    format: formatFromContentType(contentType),
    bytes: res.bytes,
    compressedBytes: res.compressedBytes,
    durationMs: res.durationMs,
    status: res.status,
  };
}

/** The start of an error answer's body kept with the error. */
const BODY_SNIPPET_BYTES = 1024;

async function bearerToken(url: string, options: FetchMetricsOptions): Promise<string | undefined> {
  if (options.bearerTokenFile !== undefined) {
    try {
      return await readTokenFile(options.bearerTokenFile);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ScrapeError(
        'auth_file',
        'GET',
        url,
        `cannot read bearer token file ${options.bearerTokenFile}: ${reason}`,
        {
          cause: err,
        },
      );
    }
  }
  return options.bearerToken;
}
