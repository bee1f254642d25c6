/**
 * One HTTP(S) exchange with the limits a scraper needs, on node:http / node:https with keep-alive agents.
 *
 * - `timeoutMs` bounds the whole exchange: connect, TLS, headers and body.
 * - `maxBytes` bounds the UNCOMPRESSED body. Compressed bodies (gzip, deflate, br) are decompressed as
 *   a stream and the exchange is aborted as soon as the limit is passed, so a decompression bomb
 *   never allocates much more than the limit.
 * - TLS: `caFile` (re-read when it changes) or `insecureSkipVerify`.
 * - Non-2xx responses resolve normally, with at most `errorBodyBytes` of their body; the caller decides.
 * - Transport failures reject with a coded `ScrapeError`.
 *
 * A request that fails on a reused keep-alive socket before any response arrives (the server closed
 * the idle connection as we reused it) is retried once on a fresh connection.
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { pipeline, Transform, type TransformCallback, Writable } from 'node:stream';
import zlib from 'node:zlib';
import { onAbort } from '../util/abort-listeners.js';
import { readFileCached } from './file-cache.js';
import { ScrapeError } from './scrape-error.js';

export interface HttpAgents {
  http: http.Agent;
  https: https.Agent;
}

/** Keep-alive agents. Idle sockets are closed after `idleTimeoutMs`. */
export function createHttpAgents(options: { maxSockets?: number; idleTimeoutMs?: number } = {}): HttpAgents {
  const common = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 64,
    maxFreeSockets: 256,
    timeout: options.idleTimeoutMs ?? 30_000,
  };
  return { http: new http.Agent(common), https: new https.Agent(common) };
}

let defaultAgents: HttpAgents | undefined;

/** The process-wide keep-alive agents used when a request names none. */
export function sharedHttpAgents(): HttpAgents {
  defaultAgents ??= createHttpAgents();
  return defaultAgents;
}

export interface HttpRequestOptions {
  method?: 'GET' | 'POST';
  /** Request headers. `Accept-Encoding: gzip` is added unless given. */
  headers?: Readonly<Record<string, string>>;
  body?: string | Buffer;
  /** Bound on the whole exchange, in milliseconds. */
  timeoutMs: number;
  /** Bound on the uncompressed body of a 2xx response, in bytes. */
  maxBytes: number;
  /** For non-2xx responses, keep at most this many bytes of the body (default 4096). */
  errorBodyBytes?: number;
  /** PEM bundle of CAs to trust (instead of the system roots); re-read when the file changes. */
  caFile?: string;
  /** Do not verify the server certificate. */
  insecureSkipVerify?: boolean;
  signal?: AbortSignal;
  agents?: HttpAgents;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  /** The uncompressed body (truncated to `errorBodyBytes` for non-2xx responses). */
  body: Buffer;
  /** Uncompressed bytes read. */
  bytes: number;
  /** Bytes read off the wire (equal to `bytes` without content-encoding). */
  compressedBytes: number;
  /** From sending the request to the end of the body. */
  durationMs: number;
}

const DEFAULT_ERROR_BODY_BYTES = 4096;

export async function httpRequest(url: string, options: HttpRequestOptions): Promise<HttpResponse> {
  const method = options.method ?? 'GET';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ScrapeError('invalid_url', method, url, 'invalid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ScrapeError('invalid_url', method, url, `unsupported protocol ${parsed.protocol} (want http: or https:)`);
  }
  if (options.signal?.aborted) throw new ScrapeError('aborted', method, url, 'aborted');
  let ca: Buffer | undefined;
  if (parsed.protocol === 'https:' && options.caFile !== undefined && !options.insecureSkipVerify) {
    try {
      ca = await readFileCached(options.caFile);
    } catch (err) {
      throw new ScrapeError('ca_file', method, url, `cannot read CA file ${options.caFile}: ${errMessage(err)}`, {
        cause: err,
      });
    }
  }
  const started = performance.now();
  const deadline = started + options.timeoutMs;
  try {
    return await attempt(parsed, url, method, options, ca, started, deadline);
  } catch (err) {
    if (err instanceof StaleSocketError) {
      return await attempt(parsed, url, method, options, ca, started, deadline, true);
    }
    throw err;
  }
}

/** A reused keep-alive socket failed before any response: safe to retry once on a new connection. */
class StaleSocketError extends Error {}

function attempt(
  parsed: URL,
  url: string,
  method: string,
  options: HttpRequestOptions,
  ca: Buffer | undefined,
  started: number,
  deadline: number,
  freshConnection = false,
): Promise<HttpResponse> {
  const agents = options.agents ?? sharedHttpAgents();
  const isHttps = parsed.protocol === 'https:';
  const headers: Record<string, string> = { 'Accept-Encoding': 'gzip', ...options.headers };
  if (options.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(options.body));
  const fail = (code: ConstructorParameters<typeof ScrapeError>[0], cause: string, extra = {}) =>
    new ScrapeError(code, method, url, cause, extra);

  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    let res: http.IncomingMessage | undefined;
    let bytes = 0;
    let compressedBytes = 0;

    const finish = (outcome: { ok: HttpResponse } | { err: Error }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      forgetAbort?.();
      if ('err' in outcome) {
        req.destroy();
        res?.destroy();
        reject(outcome.err);
      } else {
        resolve(outcome.ok);
      }
    };

    const remaining = Math.max(0, deadline - performance.now());
    const timer = setTimeout(() => {
      finish({ err: fail('timeout', `timed out after ${options.timeoutMs} ms`, { bytes }) });
    }, remaining);
    // The signal may be shared by many requests in flight (an evaluation's): one listener on it for them all.
    const forgetAbort =
      options.signal === undefined
        ? undefined
        : onAbort(options.signal, () => finish({ err: fail('aborted', 'aborted', { bytes }) }));

    const requestOptions: https.RequestOptions = {
      method,
      headers,
      agent: freshConnection ? false : isHttps ? agents.https : agents.http,
    };
    if (isHttps) {
      if (options.insecureSkipVerify) requestOptions.rejectUnauthorized = false;
      else if (ca !== undefined) requestOptions.ca = ca;
    }
    const req = (isHttps ? https : http).request(parsed, requestOptions);

    req.on('error', (err) => {
      if (settled) return;
      if (res === undefined && req.reusedSocket && !freshConnection && isResetLike(err)) {
        settled = true;
        clearTimeout(timer);
        forgetAbort?.();
        reject(new StaleSocketError(err.message));
        return;
      }
      finish({ err: classify(err, method, url, bytes) });
    });

    req.on('response', (response) => {
      res = response;
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const encoding = String(response.headers['content-encoding'] ?? 'identity')
        .trim()
        .toLowerCase();
      const declared = Number(response.headers['content-length']);
      const limit = ok ? options.maxBytes : (options.errorBodyBytes ?? DEFAULT_ERROR_BODY_BYTES);
      // A compressed body may be slightly larger than its content (incompressible data).
      const compressedLimit = options.maxBytes + Math.ceil(options.maxBytes / 1000) + 1024;

      if (ok && Number.isFinite(declared)) {
        const bound = encoding === 'identity' || encoding === '' ? options.maxBytes : compressedLimit;
        if (declared > bound) {
          finish({
            err: fail('too_large', `Content-Length ${declared} exceeds the limit of ${options.maxBytes} bytes`),
          });
          return;
        }
      }

      let decoder: Transform | undefined;
      switch (encoding) {
        case '':
        case 'identity':
          break;
        case 'gzip':
        case 'x-gzip':
          decoder = zlib.createGunzip();
          break;
        case 'deflate':
          decoder = zlib.createInflate();
          break;
        case 'br':
          decoder = zlib.createBrotliDecompress();
          break;
        default:
          finish({ err: fail('decompress', `unsupported Content-Encoding ${JSON.stringify(encoding)}`) });
          return;
      }

      const meter = new Transform({
        transform(chunk: Buffer, _enc, cb: TransformCallback) {
          compressedBytes += chunk.length;
          if (ok && decoder !== undefined && compressedBytes > compressedLimit) {
            cb(fail('too_large', `compressed body exceeds ${compressedLimit} bytes`, { bytes }));
            return;
          }
          cb(null, chunk);
        },
      });
      const chunks: Buffer[] = [];
      // An uncompressed body of a declared length is copied into one buffer as it arrives, instead of being
      // concatenated at the end (which holds it twice: a 30 MB page is then 60 MB at once).
      const sized =
        ok && (encoding === 'identity' || encoding === '') && Number.isInteger(declared) && declared > 0
          ? Buffer.allocUnsafeSlow(declared)
          : undefined;
      let truncated = false;
      const sink = new Writable({
        write(chunk: Buffer, _enc, cb) {
          const offset = bytes;
          bytes += chunk.length;
          if (bytes > limit) {
            if (ok) {
              cb(fail('too_large', `body exceeds the limit of ${limit} bytes (uncompressed)`, { bytes }));
              return;
            }
            chunks.push(chunk.subarray(0, chunk.length - (bytes - limit)));
            truncated = true;
            cb(TRUNCATED);
            return;
          }
          if (sized !== undefined && bytes <= sized.length) chunk.copy(sized, offset);
          else chunks.push(chunk);
          cb();
        },
      });

      const done = (err: Error | null | undefined): void => {
        if (settled) return;
        if (err && !(err === TRUNCATED && truncated)) {
          if (!ok) {
            // Best effort for error bodies: whatever arrived is enough to describe the failure.
            finish({ ok: makeResponse() });
            return;
          }
          finish({ err: err instanceof ScrapeError ? err : classify(err, method, url, bytes) });
          return;
        }
        finish({ ok: makeResponse() });
      };
      const makeResponse = (): HttpResponse => ({
        status,
        statusText: response.statusMessage ?? http.STATUS_CODES[status] ?? '',
        headers: response.headers,
        body:
          sized === undefined
            ? Buffer.concat(chunks)
            : chunks.length === 0
              ? sized.subarray(0, Math.min(bytes, sized.length))
              : Buffer.concat([sized, ...chunks]),
        bytes: Math.min(bytes, limit),
        compressedBytes,
        durationMs: performance.now() - started,
      });

      if (decoder) pipeline(response, meter, decoder, sink, done);
      else pipeline(response, meter, sink, done);
    });

    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

const TRUNCATED = new Error('truncated');

function isResetLike(err: NodeJS.ErrnoException): boolean {
  return err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.message === 'socket hang up';
}

const CONNECTION_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connect timed out',
  ERR_STREAM_PREMATURE_CLOSE: 'connection closed before the body ended',
};

function classify(err: unknown, method: string, url: string, bytes: number): ScrapeError {
  if (err instanceof ScrapeError) return err;
  const e = err as NodeJS.ErrnoException & { library?: string; reason?: string };
  const code = typeof e.code === 'string' ? e.code : '';
  const detail = code ? `${e.message} (${code})` : errMessage(err);
  if (code.startsWith('Z_') || code === 'ERR_BUFFER_TOO_LARGE') {
    return new ScrapeError('decompress', method, url, `cannot decompress the body: ${e.message}`, {
      bytes,
      cause: err,
    });
  }
  if (isTlsError(code, e)) {
    return new ScrapeError('tls', method, url, `TLS: ${detail}`, { bytes, cause: err });
  }
  const friendly = CONNECTION_CAUSES[code];
  const cause = friendly ? `${friendly} (${e.message})` : detail;
  return new ScrapeError('connection', method, url, cause, { bytes, cause: err });
}

const TLS_CODES = new Set([
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

function isTlsError(code: string, e: { library?: string }): boolean {
  return (
    TLS_CODES.has(code) ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code.startsWith('ERR_OSSL_') ||
    e.library === 'SSL routines'
  );
}

function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
