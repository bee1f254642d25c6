/**
 * The API's errors: one catalog of codes, one body shape `{ "error": { "code", "message" } }`, and the
 * mapping of fastify's own errors (validation, body limits, unknown routes) onto the catalog. Every
 * non-2xx answer of the service has this shape.
 */
import { STATUS_CODES } from 'node:http';
import type { FastifyError } from 'fastify';

export const API_ERRORS = {
  bad_request: { statusCode: 400, message: 'The request is not valid.' },
  unauthorized: {
    statusCode: 401,
    message: 'A valid bearer token is required: send "Authorization: Bearer <token>".',
  },
  not_found: { statusCode: 404, message: 'No such route.' },
  request_timeout: { statusCode: 408, message: 'The request did not arrive in time.' },
  expectation_failed: { statusCode: 417, message: 'Only "Expect: 100-continue" is supported.' },
  headers_too_large: {
    statusCode: 431,
    message: 'The request line and headers are too large (at most 16 KiB together).',
  },
  queue_not_found: { statusCode: 404, message: 'No queue with this id in the latest report.' },
  payload_too_large: { statusCode: 413, message: 'The request body is too large.' },
  unsupported_media_type: { statusCode: 415, message: 'The request body has an unsupported content type.' },
  too_many_requests: { statusCode: 429, message: 'Too many attempts; try again after the seconds in Retry-After.' },
  not_ready: {
    statusCode: 503,
    message: 'No evaluation has finished yet; the first report comes after the first scrape and evaluation.',
  },
  internal: { statusCode: 500, message: 'Internal error; the service log has the details.' },
} as const;

export type ApiErrorCode = keyof typeof API_ERRORS;
export const API_ERROR_CODES = Object.keys(API_ERRORS) as ApiErrorCode[];

export type ErrorBody = { readonly error: { readonly code: ApiErrorCode; readonly message: string } };

/** An error a handler throws to answer with a catalogued code. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly statusCode: number;

  constructor(code: ApiErrorCode, message: string = API_ERRORS[code].message) {
    super(message);
    this.code = code;
    this.statusCode = API_ERRORS[code].statusCode;
  }
}

export function errorBody(code: ApiErrorCode, message: string = API_ERRORS[code].message): ErrorBody {
  return { error: { code, message } };
}

export const ERROR_SCHEMA_ID = 'ErrorBody';

/** The JSON schema of the error body, registered with `addSchema` and referenced as `ErrorBody#`. */
export const ERROR_BODY_SCHEMA = {
  $id: ERROR_SCHEMA_ID,
  title: 'Error',
  description: 'The body of every error answer.',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: API_ERROR_CODES },
        message: { type: 'string' },
      },
    },
  },
} as const;

export const errorRef = { $ref: `${ERROR_SCHEMA_ID}#` } as const;

/**
 * What to answer for an error thrown in a request: an `ApiError` as is; fastify's validation errors as
 * `bad_request` with the first problem in words; the router's refusals (a malformed percent-encoding, a path
 * parameter over its length limit) as `bad_request`; its client errors by status; anything else as `internal`
 * (the caller logs it; its message is not shown).
 */
export function toApiError(
  error: FastifyError | ApiError | Error,
  request?: {
    readonly query?: unknown;
    readonly params?: unknown;
    readonly headers?: unknown;
    readonly body?: unknown;
  },
): { error: ApiError; internal: boolean } {
  if (error instanceof ApiError) return { error, internal: false };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation !== undefined && fastifyError.validation.length > 0) {
    return { error: new ApiError('bad_request', validationMessage(fastifyError, request)), internal: false };
  }
  // The router's own refusals (fastify's messages would echo the whole path back).
  if (fastifyError.code === 'FST_ERR_BAD_URL') {
    return { error: new ApiError('bad_request', 'The path has a malformed percent-encoding.'), internal: false };
  }
  if (fastifyError.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return {
      error: new ApiError('bad_request', 'A path parameter (a queue id, an asset name) is too long.'),
      internal: false,
    };
  }
  const status = fastifyError.statusCode;
  if (status === 413) return { error: new ApiError('payload_too_large'), internal: false };
  if (status === 415) return { error: new ApiError('unsupported_media_type'), internal: false };
  if (status !== undefined && status >= 400 && status < 500) {
    return { error: new ApiError('bad_request', fastifyError.message), internal: false };
  }
  return { error: new ApiError('internal'), internal: true };
}

const CONTEXTS = { querystring: 'query', params: 'params', headers: 'headers', body: 'body' } as const;

function validationMessage(error: FastifyError, request: Record<string, unknown> | undefined): string {
  const first = error.validation?.[0];
  if (first === undefined) return error.message;
  const context = error.validationContext ?? 'request';
  const path = first.instancePath.split('/').filter((p) => p !== '');
  const where = [context, ...path.filter((p) => !/^\d+$/.test(p))].join('.');
  const params = first.params as { allowedValues?: unknown[]; additionalProperty?: string };
  if (Array.isArray(params.allowedValues)) {
    const given = valueAt(request?.[CONTEXTS[context as keyof typeof CONTEXTS]], path);
    const shown = typeof given === 'string' ? ` ${JSON.stringify(given)}` : '';
    return `${where}: invalid value${shown}; expected one of ${params.allowedValues.join(', ')}`;
  }
  if (typeof params.additionalProperty === 'string') return `${where}: unknown parameter ${params.additionalProperty}`;
  return `${where} ${first.message ?? 'is not valid'}`;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let at = root;
  for (const part of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/**
 * The raw HTTP answer to a request Node's parser refused before any route saw it (a malformed request line,
 * headers over Node's limit, which holds a long URL too, a request that did not arrive in time), in the error
 * shape of every other answer; the connection is closed after it.
 */
export function clientErrorResponse(error: Error & { code?: string }): string {
  const code: ApiErrorCode =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'headers_too_large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'request_timeout'
        : 'bad_request';
  return rawErrorResponse(code);
}

/** A whole raw HTTP answer in the error shape that closes the connection (for sockets no route answers). */
export function rawErrorResponse(code: ApiErrorCode, message?: string): string {
  const { statusCode } = API_ERRORS[code];
  const body = JSON.stringify(errorBody(code, message));
  return [
    `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
