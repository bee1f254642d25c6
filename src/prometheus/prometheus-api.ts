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
 */
import { readTokenFile } from '../scrape/file-cache.js';
import { userAgent } from '../scrape/http-fetch.js';
import { type HttpAgents, type HttpResponse, httpRequest } from '../scrape/http-transport.js';
import { redactUrl, ScrapeError, urlCredentials, withoutCredentials } from '../scrape/scrape-error.js';

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
  /** Bound on the uncompressed size of one answer (default 64 MiB). */
  maxBytes?: number;
  agents?: HttpAgents;
}

export type Labels = Record<string, string>;

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
  labelValues(label: string, matchers?: readonly string[], startSec?: number, endSec?: number): Promise<string[]>;
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

const DEFAULT_MAX_BYTES = 64 << 20;

/** Parses a sample value as the API writes it: decimal strings, "NaN", "+Inf", "-Inf". */
export function parseSampleValue(raw: unknown): number {
  if (typeof raw !== 'string') throw new TypeError(`sample value is not a string: ${JSON.stringify(raw)}`);
  switch (raw) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
  }
  const v = raw.trim() === '' ? Number.NaN : Number(raw);
  if (Number.isNaN(v)) throw new TypeError(`sample value is not a number: ${JSON.stringify(raw)}`);
  return v;
}

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
   * Sends one request and returns the API's `data` (and `warnings`, without credentials) or throws a
   * PrometheusApiError; `clean` removes the request's credentials from text of the answer a caller passes on.
   */
  const call = async (
    method: 'GET' | 'POST',
    path: string,
    params: URLSearchParams,
    expr?: string,
    signal?: AbortSignal,
  ): Promise<{ data: unknown; warnings: string[]; clean: (text: string) => string }> => {
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
    let body: string | undefined;
    if (method === 'POST') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = params.toString();
    }
    let res: HttpResponse;
    try {
      res = await httpRequest(url, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        timeoutMs: options.timeoutMs,
        maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
        errorBodyBytes: 64 * 1024,
        ...(options.caFile !== undefined ? { caFile: options.caFile } : {}),
        ...(options.insecureSkipVerify !== undefined ? { insecureSkipVerify: options.insecureSkipVerify } : {}),
        ...(options.agents !== undefined ? { agents: options.agents } : {}),
        ...(signal !== undefined ? { signal } : {}),
      });
    } catch (err) {
      if (err instanceof ScrapeError) {
        const cause = err.message.slice(err.message.indexOf(': ') + 2);
        throw new PrometheusApiError('transport', err.code, cause, { request, expr, cause: err });
      }
      throw err;
    }
    const ok = res.status >= 200 && res.status < 300;
    let json: unknown;
    try {
      json = JSON.parse(res.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    const envelope = isRecord(json) ? json : undefined;
    if (envelope?.['status'] === 'error' || !ok) {
      if (envelope && typeof envelope['errorType'] === 'string') {
        const detail = typeof envelope['error'] === 'string' ? clean(envelope['error']) : 'error';
        throw new PrometheusApiError('api', clean(envelope['errorType']), detail, {
          request,
          status: res.status,
          expr,
        });
      }
      const snippet = bodyExcerpt(res.body, clean);
      const detail = `HTTP ${res.status} ${res.statusText}${snippet ? `: ${snippet}` : ''}`;
      throw new PrometheusApiError('http', 'http_status', detail, { request, status: res.status, expr });
    }
    if (envelope?.['status'] !== 'success' || !('data' in envelope)) {
      const what = /^\s*</.test(res.body.subarray(0, 512).toString('utf8'))
        ? `the answer is HTML, not the Prometheus API (is the URL the server's root?): ${bodyExcerpt(res.body, clean)}`
        : 'the answer is not a Prometheus API success response';
      throw new PrometheusApiError('decode', 'bad_response', what, {
        request,
        status: res.status,
        expr,
      });
    }
    const warnings = Array.isArray(envelope['warnings'])
      ? envelope['warnings'].filter((w): w is string => typeof w === 'string').map(clean)
      : [];
    return { data: envelope['data'], warnings, clean };
  };

  const decodeFailure = (
    method: 'GET' | 'POST',
    path: string,
    expr: string | undefined,
    err: unknown,
  ): PrometheusApiError =>
    new PrometheusApiError('decode', 'bad_response', err instanceof Error ? err.message : String(err), {
      request: `${method} ${redactUrl(endpointUrl(path))}`,
      expr,
      cause: err,
    });

  return {
    async query(expr, timeSec, request) {
      const params = new URLSearchParams({ query: expr });
      if (timeSec !== undefined) params.set('time', formatSeconds(timeSec));
      const { data, warnings } = await call('POST', '/api/v1/query', params, expr, request?.signal);
      try {
        return decodeQueryData(data, warnings);
      } catch (err) {
        throw decodeFailure('POST', '/api/v1/query', expr, err);
      }
    },

    async queryRange(expr, startSec, endSec, stepSec, request) {
      const params = new URLSearchParams({
        query: expr,
        start: formatSeconds(startSec),
        end: formatSeconds(endSec),
        step: formatSeconds(stepSec),
      });
      const { data, warnings } = await call('POST', '/api/v1/query_range', params, expr, request?.signal);
      let decoded: QueryResult;
      try {
        decoded = decodeQueryData(data, warnings);
      } catch (err) {
        throw decodeFailure('POST', '/api/v1/query_range', expr, err);
      }
      if (decoded.resultType !== 'matrix') {
        throw decodeFailure(
          'POST',
          '/api/v1/query_range',
          expr,
          new TypeError(`expected a matrix, got ${decoded.resultType}`),
        );
      }
      return decoded;
    },

    async series(matchers, startSec, endSec, request) {
      if (matchers.length === 0) throw new TypeError('series() needs at least one matcher');
      const params = new URLSearchParams();
      for (const m of matchers) params.append('match[]', m);
      if (startSec !== undefined) params.set('start', formatSeconds(startSec));
      if (endSec !== undefined) params.set('end', formatSeconds(endSec));
      const { data } = await call('POST', '/api/v1/series', params, undefined, request?.signal);
      if (!Array.isArray(data))
        throw decodeFailure('POST', '/api/v1/series', undefined, new TypeError('data is not a list'));
      return data.map((d) => toLabels(d));
    },

    async labelValues(label, matchers, startSec, endSec) {
      const params = new URLSearchParams();
      for (const m of matchers ?? []) params.append('match[]', m);
      if (startSec !== undefined) params.set('start', formatSeconds(startSec));
      if (endSec !== undefined) params.set('end', formatSeconds(endSec));
      const path = `/api/v1/label/${encodeURIComponent(label)}/values`;
      const { data } = await call('GET', path, params);
      if (!Array.isArray(data) || !data.every((v) => typeof v === 'string')) {
        throw decodeFailure('GET', path, undefined, new TypeError('data is not a list of strings'));
      }
      return data as string[];
    },

    async buildInfo() {
      const { data, clean } = await call('GET', '/api/v1/status/buildinfo', new URLSearchParams());
      if (!isRecord(data)) throw decodeFailure('GET', '/api/v1/status/buildinfo', undefined, new TypeError('no data'));
      // Shown in /api/v1/targets: without the request's credentials (an upstream may echo them) and short.
      const s = (k: string): string => {
        const value = typeof data[k] === 'string' ? clean(data[k]) : '';
        return value.length <= BUILD_INFO_MAX_CHARS ? value : `${value.slice(0, BUILD_INFO_MAX_CHARS - 1)}…`;
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

function decodeQueryData(data: unknown, warnings: string[]): QueryResult {
  if (!isRecord(data)) throw new TypeError('data is not an object');
  const { resultType, result } = data;
  switch (resultType) {
    case 'vector': {
      if (!Array.isArray(result)) throw new TypeError('vector result is not a list');
      const out: InstantSample[] = [];
      let skipped = 0;
      for (const item of result) {
        if (!isRecord(item)) throw new TypeError('vector element is not an object');
        if (item['value'] === undefined && item['histogram'] !== undefined) {
          skipped++;
          continue;
        }
        out.push({ metric: toLabels(item['metric']), ...toPoint(item['value']) });
      }
      return { resultType, result: out, warnings: withSkipped(warnings, skipped) };
    }
    case 'matrix': {
      if (!Array.isArray(result)) throw new TypeError('matrix result is not a list');
      let skipped = 0;
      const out = result.map((item): RangeSeries => {
        if (!isRecord(item)) throw new TypeError('matrix element is not an object');
        const values = item['values'] ?? [];
        if (!Array.isArray(values)) throw new TypeError('matrix values is not a list');
        if (Array.isArray(item['histograms'])) skipped += item['histograms'].length;
        return { metric: toLabels(item['metric']), samples: values.map(toPoint) };
      });
      return { resultType, result: out, warnings: withSkipped(warnings, skipped) };
    }
    case 'scalar':
      return { resultType, result: toPoint(result), warnings };
    case 'string': {
      if (!Array.isArray(result) || result.length !== 2 || typeof result[1] !== 'string') {
        throw new TypeError('string result is not [time, "text"]');
      }
      return { resultType, result: { timeSec: toTime(result[0]), value: result[1] }, warnings };
    }
    default:
      throw new TypeError(`unknown resultType ${JSON.stringify(resultType)}`);
  }
}

function withSkipped(warnings: string[], skipped: number): string[] {
  return skipped === 0 ? warnings : [...warnings, `${skipped} native-histogram samples left out (not supported)`];
}

function toPoint(raw: unknown): SamplePoint {
  if (!Array.isArray(raw) || raw.length !== 2)
    throw new TypeError(`sample is not [time, "value"]: ${JSON.stringify(raw)}`);
  return { timeSec: toTime(raw[0]), value: parseSampleValue(raw[1]) };
}

function toTime(raw: unknown): number {
  const t = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(t)) throw new TypeError(`sample time is not a number: ${JSON.stringify(raw)}`);
  return t;
}

function toLabels(raw: unknown): Labels {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw new TypeError('labels are not an object');
  const out: Labels = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string') throw new TypeError(`label ${k} is not a string`);
    out[k] = v;
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The start of a response body on one line, at most 80 characters (an HTML page is never echoed whole). */
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

/** The start of an answer's body on one line, without the secrets `clean` removes (before it is cut short). */
function bodyExcerpt(body: Buffer, clean: (text: string) => string): string {
  const flat = clean(body.subarray(0, 64 * 1024).toString('utf8'))
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length <= 80 ? flat : `${flat.slice(0, 79)}…`;
}
