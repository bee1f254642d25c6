/**
 * Client for the Prometheus HTTP API (`/api/v1`), as Prometheus, Thanos, Mimir and Cortex serve it.
 *
 * Contract:
 * - `url` is the API root, the part before `/api/v1` (it may carry a path prefix such as
 *   `http://mimir/prometheus`).
 * - `query` and `queryRange` are POSTed form-encoded (long expressions do not fit in a URL);
 *   `series` too; `labelValues` and `buildInfo` are GETs.
 * - Times and steps are in seconds (fractions allowed). Sample values are numbers: the API's
 *   strings "NaN", "+Inf" and "-Inf" become NaN, Infinity and -Infinity.
 * - Auth: `bearerToken`, or `bearerTokenFile` (re-read when it changes), or `basicAuth`;
 *   `headers` are sent on every request (e.g. `X-Scope-OrgID` for Mimir and Cortex tenants).
 * - Every failure rejects with a `PrometheusApiError`: `kind` says where it failed (the API
 *   answered with an error, a non-API HTTP error, the transport, an unreadable answer), `errorType`
 *   is the API's own (`bad_data`, `execution`, `timeout`, `canceled`, `internal`, `unavailable`,
 *   `not_found`) or the transport's `ScrapeError` code, and `expr` the expression when there is one.
 * - Native-histogram samples are not supported; they are left out and reported in `warnings`.
 * - Answers are bounded: at most `maxBytes` decoded (default `PROMETHEUS_ANSWER_MAX_BYTES`; a larger one fails
 *   with the transport error `too_large`, saying so), decoded off the event loop when large (answer-decoder.ts),
 *   and every text of the server repeated in an error, a warning or the build info is cut to
 *   `UPSTREAM_TEXT_MAX_CHARS` (then `…` and the length it had), after the request's credentials are removed.
 */
import { readTokenFile } from '../scrape/file-cache.js';
import { userAgent } from '../scrape/http-fetch.js';
import { type HttpAgents, type HttpResponse, httpRequest } from '../scrape/http-transport.js';
import { redactUrl, ScrapeError, urlCredentials, withoutCredentials } from '../scrape/scrape-error.js';
import { shortenedText } from '../util/shortened-text.js';
import { AnswerTooLargeError, decodeAnswer } from './answer-decoder.js';
import {
  type AnswerData,
  type AnswerShape,
  type AnswerText,
  type Labels,
  parseSampleValue,
  type QueryColumns,
} from './prometheus-answer.js';

export type { Labels };
export { parseSampleValue };

export interface PrometheusClientOptions {
  /** API root, e.g. `http://127.0.0.1:9090` or `https://mimir.example/prometheus`. */
  url: string;
  bearerToken?: string;
  bearerTokenFile?: string;
  basicAuth?: { username: string; password: string };
  /** Extra headers on every request, e.g. `{ 'X-Scope-OrgID': 'team-a' }`. */
  headers?: Readonly<Record<string, string>>;
  /** Bound on each request, in milliseconds. */
  timeoutMs: number;
  caFile?: string;
  insecureSkipVerify?: boolean;
  /** Bound on the uncompressed size of one answer (default `PROMETHEUS_ANSWER_MAX_BYTES`). */
  maxBytes?: number;
  agents?: HttpAgents;
}

export interface SamplePoint {
  timeSec: number;
  value: number;
}

export interface InstantSample extends SamplePoint {
  metric: Labels;
}

export interface RangeSeries {
  metric: Labels;
  samples: SamplePoint[];
}

export type QueryResult =
  | { resultType: 'vector'; result: InstantSample[]; warnings: string[] }
  | { resultType: 'scalar'; result: SamplePoint; warnings: string[] }
  | { resultType: 'string'; result: { timeSec: number; value: string }; warnings: string[] }
  | { resultType: 'matrix'; result: RangeSeries[]; warnings: string[] };

export type MatrixResult = Extract<QueryResult, { resultType: 'matrix' }>;

export interface BuildInfo {
  version: string;
  revision: string;
  branch: string;
  buildUser: string;
  buildDate: string;
  goVersion: string;
}

/** Per request: once `signal` is aborted, the request is abandoned and rejects (transport error `aborted`). */
export interface RequestOptions {
  readonly signal?: AbortSignal | undefined;
}

export interface PrometheusClient {
  /** Instant query at `timeSec` (server time "now" when omitted). */
  query(expr: string, timeSec?: number, request?: RequestOptions): Promise<QueryResult>;
  queryRange(
    expr: string,
    startSec: number,
    endSec: number,
    stepSec: number,
    request?: RequestOptions,
  ): Promise<MatrixResult>;
  /** Label sets of the series matching any of the selectors. */
  series(matchers: readonly string[], startSec?: number, endSec?: number, request?: RequestOptions): Promise<Labels[]>;
  labelValues(
    label: string,
    matchers?: readonly string[],
    startSec?: number,
    endSec?: number,
    request?: RequestOptions,
  ): Promise<string[]>;
  buildInfo(): Promise<BuildInfo>;
}

export type PrometheusErrorKind =
  /** The API answered `{"status":"error"}`; `errorType` is the API's. */
  | 'api'
  /** A non-2xx answer that is not an API error body (a proxy's 502, say); `errorType` is `http_status`. */
  | 'http'
  /** The request did not complete; `errorType` is the `ScrapeError` code (`timeout`, `connection`, …). */
  | 'transport'
  /** A 2xx answer that is not a valid API response; `errorType` is `bad_response`. */
  | 'decode';

export class PrometheusApiError extends Error {
  override readonly name = 'PrometheusApiError';
  readonly kind: PrometheusErrorKind;
  readonly errorType: string;
  readonly status: number | undefined;
  readonly expr: string | undefined;
  /** Method and URL of the request, credentials removed. */
  readonly request: string;

  constructor(
    kind: PrometheusErrorKind,
    errorType: string,
    detail: string,
    context: { request: string; status?: number | undefined; expr?: string | undefined; cause?: unknown },
  ) {
    const statusPart = context.status !== undefined ? ` (HTTP ${context.status})` : '';
    const exprPart = context.expr !== undefined ? ` [expr: ${context.expr}]` : '';
    super(
      `${context.request}: ${errorType}: ${detail}${statusPart}${exprPart}`,
      context.cause === undefined ? undefined : { cause: context.cause },
    );
    this.kind = kind;
    this.errorType = errorType;
    this.status = context.status;
    this.expr = context.expr;
    this.request = context.request;
  }
}

/**
 * The largest answer accepted, decoded: 16 MiB, sized for the standalone Deployment's 384 MiB limit (Prometheus
 * mode). An answer this large is about 800,000 samples: about 75 MiB on the decoder's heap while parsed, then
 * about 60 MiB of samples and vectors on the service's own; with the service's 100 to 140 MiB under load, that
 * stays below 300 MiB. Answers the diagnoses ask for are far smaller: at 10,000 queues, an instant vector is about
 * 2 MiB (docs/reliability.md, Prometheus answers).
 */
export const PROMETHEUS_ANSWER_MAX_BYTES = 16 * 1024 * 1024;

/** The most of one text of the server (an error, a warning, a build-info field) repeated anywhere. */
export const UPSTREAM_TEXT_MAX_CHARS = 300;

export function createPrometheusClient(options: PrometheusClientOptions): PrometheusClient {
  let root: URL;
  try {
    root = new URL(options.url);
  } catch {
    throw new TypeError(`invalid Prometheus URL: ${options.url}`);
  }
  if (root.protocol !== 'http:' && root.protocol !== 'https:') {
    throw new TypeError(`invalid Prometheus URL (want http or https): ${options.url}`);
  }
  const basePath = root.pathname.replace(/\/+$/, '');
  const endpointUrl = (path: string, params?: URLSearchParams): string => {
    const u = new URL(root.toString());
    u.pathname = `${basePath}${path}`;
    u.search = params && [...params.keys()].length > 0 ? `?${params.toString()}` : '';
    u.hash = '';
    return u.toString();
  };

  const authHeader = async (request: string): Promise<string | undefined> => {
    if (options.bearerTokenFile !== undefined) {
      try {
        return `Bearer ${await readTokenFile(options.bearerTokenFile)}`;
      } catch (err) {
        throw new PrometheusApiError(
          'transport',
          'auth_file',
          `cannot read bearer token file ${options.bearerTokenFile}: ${err instanceof Error ? err.message : String(err)}`,
          { request, cause: err },
        );
      }
    }
    if (options.bearerToken !== undefined) return `Bearer ${options.bearerToken}`;
    if (options.basicAuth !== undefined) {
      const { username, password } = options.basicAuth;
      return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
    }
    return undefined;
  };

  /**
   * Sends one request and returns the API's `data` as `shape` expects it (and `warnings`, without credentials
   * and cut short) or throws a PrometheusApiError; `clean` removes the request's credentials from text of the
   * answer a caller passes on.
   */
  const call = async <Shape extends AnswerShape>(
    method: 'GET' | 'POST',
    path: string,
    params: URLSearchParams,
    shape: Shape,
    expr?: string,
    signal?: AbortSignal,
  ): Promise<{ data: Extract<AnswerData, { shape: Shape }>; warnings: string[]; clean: (text: string) => string }> => {
    const url = method === 'GET' ? endpointUrl(path, params) : endpointUrl(path);
    const request = `${method} ${redactUrl(url)}`;
    const headers: Record<string, string> = {
      Accept: 'application/json',
      'User-Agent': userAgent(),
      ...options.headers,
    };
    const auth = await authHeader(request);
    if (auth !== undefined) headers['Authorization'] = auth;
    // What an upstream may echo back (a proxy's error page, a debugging endpoint) and must not be repeated.
    const secrets = secretsOf(auth, options);
    const clean = (text: string): string => withoutCredentials(text, secrets);
    // Cut after the credentials are removed, from a start long enough to hold a credential the cut would halve.
    const quoteChars = UPSTREAM_TEXT_MAX_CHARS + Math.max(0, ...secrets.map((secret) => secret.length));
    const quote = (text: AnswerText): string => shortenedText(clean(text.prefix), UPSTREAM_TEXT_MAX_CHARS, text.length);
    let body: string | undefined;
    if (method === 'POST') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = params.toString();
    }
    const maxBytes = options.maxBytes ?? PROMETHEUS_ANSWER_MAX_BYTES;
    let res: HttpResponse;
    try {
      res = await httpRequest(url, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        timeoutMs: options.timeoutMs,
        maxBytes,
        errorBodyBytes: 64 * 1024,
        ...(options.caFile !== undefined ? { caFile: options.caFile } : {}),
        ...(options.insecureSkipVerify !== undefined ? { insecureSkipVerify: options.insecureSkipVerify } : {}),
        ...(options.agents !== undefined ? { agents: options.agents } : {}),
        ...(signal !== undefined ? { signal } : {}),
      });
    } catch (err) {
      if (err instanceof ScrapeError) {
        const cause =
          err.code === 'too_large'
            ? `the answer is larger than ${maxBytes} bytes, the most this service accepts from Prometheus; narrow the fleet selector or split the fleet`
            : err.message.slice(err.message.indexOf(': ') + 2);
        throw new PrometheusApiError('transport', err.code, cause, { request, expr, cause: err });
      }
      throw err;
    }
    const ok = res.status >= 200 && res.status < 300;
    // Kept before the body moves to the decoder: what an error quotes of an answer that is not the API's.
    const head = Buffer.from(res.body.subarray(0, EXCERPT_SOURCE_BYTES));
    let answer: Awaited<ReturnType<typeof decodeAnswer>>;
    try {
      answer = await decodeAnswer(res.body, shape, quoteChars);
    } catch (err) {
      const detail = err instanceof AnswerTooLargeError ? err.message : `cannot decode the answer: ${String(err)}`;
      throw new PrometheusApiError('decode', 'bad_response', detail, { request, status: res.status, expr, cause: err });
    }
    if (answer.status?.prefix === 'error' || !ok) {
      if (answer.errorType !== undefined) {
        const detail = answer.error !== undefined ? quote(answer.error) : 'error';
        throw new PrometheusApiError('api', quote(answer.errorType), detail, { request, status: res.status, expr });
      }
      const snippet = bodyExcerpt(head, clean);
      const detail = `HTTP ${res.status} ${res.statusText}${snippet ? `: ${snippet}` : ''}`;
      throw new PrometheusApiError('http', 'http_status', detail, { request, status: res.status, expr });
    }
    if (answer.status?.prefix !== 'success' || !answer.hasData) {
      const what = /^\s*</.test(head.subarray(0, 512).toString('utf8'))
        ? `the answer is HTML, not the Prometheus API (is the URL the server's root?): ${bodyExcerpt(head, clean)}`
        : 'the answer is not a Prometheus API success response';
      throw new PrometheusApiError('decode', 'bad_response', what, { request, status: res.status, expr });
    }
    if (answer.data?.shape !== shape) {
      const detail = answer.dataError !== undefined ? quote(answer.dataError) : 'the data is not what was asked for';
      throw new PrometheusApiError('decode', 'bad_response', detail, { request, expr });
    }
    const warnings = answer.warnings.map(quote);
    if (answer.warningsLeftOut > 0) warnings.push(`${answer.warningsLeftOut} more warnings left out`);
    return { data: answer.data as Extract<AnswerData, { shape: Shape }>, warnings, clean };
  };

  const decodeFailure = (method: 'GET' | 'POST', path: string, expr: string | undefined, detail: string) =>
    new PrometheusApiError('decode', 'bad_response', detail, {
      request: `${method} ${redactUrl(endpointUrl(path))}`,
      expr,
    });

  return {
    async query(expr, timeSec, request) {
      const params = new URLSearchParams({ query: expr });
      if (timeSec !== undefined) params.set('time', formatSeconds(timeSec));
      const { data, warnings } = await call('POST', '/api/v1/query', params, 'query', expr, request?.signal);
      return queryResult(data.columns, warnings);
    },

    async queryRange(expr, startSec, endSec, stepSec, request) {
      const params = new URLSearchParams({
        query: expr,
        start: formatSeconds(startSec),
        end: formatSeconds(endSec),
        step: formatSeconds(stepSec),
      });
      const { data, warnings } = await call('POST', '/api/v1/query_range', params, 'query', expr, request?.signal);
      const decoded = queryResult(data.columns, warnings);
      if (decoded.resultType !== 'matrix') {
        throw decodeFailure('POST', '/api/v1/query_range', expr, `expected a matrix, got ${decoded.resultType}`);
      }
      return decoded;
    },

    async series(matchers, startSec, endSec, request) {
      if (matchers.length === 0) throw new TypeError('series() needs at least one matcher');
      const params = new URLSearchParams();
      for (const m of matchers) params.append('match[]', m);
      if (startSec !== undefined) params.set('start', formatSeconds(startSec));
      if (endSec !== undefined) params.set('end', formatSeconds(endSec));
      const { data } = await call('POST', '/api/v1/series', params, 'labelSets', undefined, request?.signal);
      return data.labelSets;
    },

    async labelValues(label, matchers, startSec, endSec, request) {
      const params = new URLSearchParams();
      for (const m of matchers ?? []) params.append('match[]', m);
      if (startSec !== undefined) params.set('start', formatSeconds(startSec));
      if (endSec !== undefined) params.set('end', formatSeconds(endSec));
      const path = `/api/v1/label/${encodeURIComponent(label)}/values`;
      const { data } = await call('GET', path, params, 'strings', undefined, request?.signal);
      return data.strings;
    },

    async buildInfo() {
      const { data, clean } = await call('GET', '/api/v1/status/buildinfo', new URLSearchParams(), 'buildInfo');
      // Shown in /api/v1/targets: without the request's credentials (an upstream may echo them) and short.
      const s = (k: string): string => {
        const field = data.fields[k];
        if (field === undefined) return '';
        const value = clean(field.prefix);
        return value.length <= BUILD_INFO_MAX_CHARS && field.length <= BUILD_INFO_MAX_CHARS
          ? value
          : `${value.slice(0, BUILD_INFO_MAX_CHARS - 1)}…`;
      };
      return {
        version: s('version'),
        revision: s('revision'),
        branch: s('branch'),
        buildUser: s('buildUser'),
        buildDate: s('buildDate'),
        goVersion: s('goVersion'),
      };
    },
  };
}

/** The longest build-info field passed on (versions, revisions and dates are far shorter). */
const BUILD_INFO_MAX_CHARS = 100;

/** Seconds as the API accepts them: a decimal number, never exponent notation. */
function formatSeconds(sec: number): string {
  if (!Number.isFinite(sec)) throw new RangeError(`not a finite time or duration: ${sec}`);
  return Number.isInteger(sec) ? String(sec) : sec.toFixed(3).replace(/\.?0+$/, '');
}

/** A query result from its columns (see prometheus-answer.ts). */
function queryResult(columns: QueryColumns, warnings: string[]): QueryResult {
  switch (columns.resultType) {
    case 'vector': {
      const { metrics, times, values } = columns;
      const result = metrics.map(
        (metric, i): InstantSample => ({
          metric,
          timeSec: times[i] as number,
          value: values[i] as number,
        }),
      );
      return { resultType: 'vector', result, warnings: withSkipped(warnings, columns.skipped) };
    }
    case 'matrix': {
      const { metrics, ends, times, values } = columns;
      const result = metrics.map((metric, i): RangeSeries => {
        const samples: SamplePoint[] = [];
        for (let at = i === 0 ? 0 : (ends[i - 1] as number); at < (ends[i] as number); at++) {
          samples.push({ timeSec: times[at] as number, value: values[at] as number });
        }
        return { metric, samples };
      });
      return { resultType: 'matrix', result, warnings: withSkipped(warnings, columns.skipped) };
    }
    case 'scalar':
      return { resultType: 'scalar', result: { timeSec: columns.timeSec, value: columns.value }, warnings };
    case 'string':
      return { resultType: 'string', result: { timeSec: columns.timeSec, value: columns.value }, warnings };
  }
}

function withSkipped(warnings: string[], skipped: number): string[] {
  return skipped === 0 ? warnings : [...warnings, `${skipped} native-histogram samples left out (not supported)`];
}

/** Headers whose values name a tenant or a route, not a credential: kept in what is repeated. */
const PLAIN_HEADERS = new Set(['x-scope-orgid']);

/**
 * The credentials of a request as an upstream could echo them: the URL's user and password, the Authorization
 * value, its token part, the basic-auth password, and the values of the extra headers other than plain ones.
 */
function secretsOf(auth: string | undefined, options: PrometheusClientOptions): string[] {
  const secrets: string[] = urlCredentials(options.url);
  if (auth !== undefined) secrets.push(auth, auth.slice(auth.indexOf(' ') + 1));
  if (options.basicAuth !== undefined) secrets.push(options.basicAuth.password);
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (!PLAIN_HEADERS.has(name.toLowerCase())) secrets.push(value);
  }
  return secrets;
}

/** How much of an answer's start is kept for an excerpt. */
const EXCERPT_SOURCE_BYTES = 64 * 1024;

/** The start of an answer's body on one line, without the secrets `clean` removes (before it is cut short). */
function bodyExcerpt(body: Buffer, clean: (text: string) => string): string {
  const flat = clean(body.subarray(0, EXCERPT_SOURCE_BYTES).toString('utf8')).replace(/\s+/g, ' ').trim();
  return flat.length <= 80 ? flat : `${flat.slice(0, 79)}…`;
}
