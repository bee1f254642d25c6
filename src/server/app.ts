/**
 * The HTTP application, built without listening (tests call `inject()`; only `cli/serve.ts` listens).
 *
 * Contract:
 * - Routes: `/api/v1/diagnosis`, `/api/v1/queues/:id`, `/api/v1/queues/:id/series` (with a series source),
 *   `/api/v1/targets`, `/api/v1/rules` (behind the bearer token when one is configured), the page at `/`
 *   (behind the same token or a session cookie from `POST /login`) with its static files under `/assets/` and
 *   the charts of one queue at `/queue-charts/:id`,
 *   `/healthz`, `/readyz`, `/metrics` (always open), the OpenAPI document at `/docs/json` and its UI at `/docs`.
 * - Every route declares its schemas; every error answer is `{ "error": { "code", "message" } }` with a
 *   code from `errors.ts`, including unknown routes (404 `not_found`) and invalid parameters (400).
 * - The token is compared in constant time (over SHA-256 digests, so the length does not leak either); a token
 *   shorter than `MIN_API_TOKEN_BYTES` is refused (`TypeError`).
 * - Limits are explicit: request body size, connection, request and keep-alive timeouts, sign-in attempts per
 *   client address, and the bytes of cached answers (service/answer-budget.ts).
 * - No credential reaches the log at any level (request-log.ts): the request log's URLs go without credential
 *   query parameters and without the API token, and no header is logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { DEFAULT_EVALUATION_INTERVAL } from '../config/service-defaults.js';
import type { Report } from '../diagnosis/report.js';
import { type AnswerCacheLimits, DEFAULT_ANSWER_CACHE } from '../service/answer-budget.js';
import { apiTokenProblem } from '../service/api-token.js';
import type { QueueSeries } from '../service/queue-series.js';
import type { TargetsView } from '../service/target-status.js';
import { parseDuration } from '../util/duration.js';
import type { ThrottleLimits } from './client-throttle.js';
import {
  API_ERRORS,
  ApiError,
  clientErrorResponse,
  ERROR_BODY_SCHEMA,
  errorBody,
  rawErrorResponse,
  toApiError,
} from './errors.js';
import type { PageSettings } from './page/queue-context.js';
import { createReportCache } from './report-cache.js';
import { requestLogSerializers } from './request-log.js';
import { apiRoutes } from './routes/api.js';
import { opsRoutes } from './routes/ops.js';
import { pageRoutes } from './routes/page.js';
import type { RulesView } from './rules-view.js';
import { REPORT_SCHEMA_ID, RULES_SCHEMA, reportJsonSchema, SERIES_SCHEMA, TARGETS_SCHEMA } from './schemas.js';

export const API_PREFIX = '/api/v1';
export const DOCS_PREFIX = '/docs';

/** Explicit bounds on what a client can make the server hold. */
export type ServerLimits = {
  /** Largest request body accepted (no route takes one). */
  readonly bodyLimitBytes: number;
  /** A socket idle this long is closed. */
  readonly connectionTimeoutMs: number;
  /** A request must be received in full within this time (checked every second). */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  readonly keepAliveTimeoutMs: number;
  /** Longest path parameter (a queue id). */
  readonly maxParamLength: number;
  /** `POST /login` attempts per client address: a burst, then so many a second; beyond that 429. */
  readonly signIn: ThrottleLimits;
};

export const DEFAULT_LIMITS: ServerLimits = {
  bodyLimitBytes: 16 * 1024,
  connectionTimeoutMs: 30_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxParamLength: 1024,
  // A person mistyping gets five tries at once and one more a second; 4,096 addresses take about 400 KB.
  signIn: { burst: 5, perSecond: 1, maxClients: 4096 },
};

export type AppOptions = {
  /** The latest report; undefined until the first evaluation. */
  readonly report: () => Report | undefined;
  readonly ready: () => boolean;
  /** Why the last evaluation failed, if it did: said by the 503 `not_ready` answers until one succeeds. */
  readonly evaluationError?: () => string | undefined;
  readonly targets: () => TargetsView;
  readonly rules: RulesView;
  /** The charts' data (the page's charts and `/api/v1/queues/:id/series`); without it, neither. */
  readonly series?: QueueSeries;
  /** What the page reads of the configuration: thresholds in force, placement labels, the Grafana to link to. */
  readonly page?: PageSettings;
  /** A prom-client registry (or anything that renders an exposition). */
  readonly metrics: { metrics(): Promise<string>; readonly contentType: string };
  /**
   * When set, `/api/v1/*` requires `Authorization: Bearer <token>`, and `/` that or a session cookie. At least
   * `MIN_API_TOKEN_BYTES` long.
   */
  readonly apiToken?: string;
  /**
   * The proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (fastify's `trustProxy`: addresses,
   * CIDR ranges or names such as `loopback`); default none. They decide the client address of the sign-in
   * throttle and whether a request came over HTTPS (the session cookie's `Secure`).
   */
  readonly trustProxy?: boolean | string | readonly string[];
  /** Always mark the session cookie `Secure`; by default only for requests that came over HTTPS. */
  readonly secureCookie?: boolean;
  /** Structured logger (pino); default: no logging. */
  readonly logger?: FastifyBaseLogger;
  /** Told to clients that ask too early (Retry-After), in milliseconds. Default 15 s. */
  readonly evaluationIntervalMs?: number;
  readonly version?: string;
  readonly limits?: Partial<ServerLimits>;
  /** Bounds of the cached answers; default `DEFAULT_ANSWER_CACHE` (service/answer-budget.ts). */
  readonly answerCache?: AnswerCacheLimits;
};

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const tokenProblem = options.apiToken === undefined ? undefined : apiTokenProblem(options.apiToken);
  if (tokenProblem !== undefined) throw new TypeError(tokenProblem);
  const ownSecrets = options.apiToken === undefined ? [] : [options.apiToken, encodeURIComponent(options.apiToken)];
  const sendError = (error: Error, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const mapped = toApiError(error, request as unknown as Record<string, unknown>);
    if (mapped.internal) request.log.error({ err: error, url: request.url }, 'request failed');
    return reply.code(mapped.error.statusCode).send(errorBody(mapped.error.code, mapped.error.message));
  };
  const app = Fastify({
    ...(options.logger !== undefined
      ? { loggerInstance: options.logger.child({}, { serializers: requestLogSerializers(ownSecrets) }) }
      : { logger: false }),
    ...(options.trustProxy !== undefined
      ? { trustProxy: typeof options.trustProxy === 'object' ? [...options.trustProxy] : options.trustProxy }
      : {}),
    // Requests are logged at debug level by the onResponse hook below, not at info by fastify.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: limits.bodyLimitBytes,
    connectionTimeout: limits.connectionTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node looks for requests past their timeout every 30 s by default, which lets a client that trickles its
    // headers hold a connection up to 30 s beyond the limit; checked every second, it is cut within a second of it.
    // An HTTP/1.1 request without Host is refused below, in the error shape (Node's own 400 has no body).
    http: { connectionsCheckingInterval: Math.min(1_000, limits.requestTimeoutMs), requireHostHeader: false },
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    routerOptions: { maxParamLength: limits.maxParamLength },
    // What the router refuses before any route (a malformed percent-encoding, a path parameter over
    // `maxParamLength`) is answered like any other error, not in fastify's own shape.
    frameworkErrors: sendError,
    // Requests that arrive while closing are answered as usual (fastify's own 503 has another body shape);
    // close() still waits for them.
    return503OnClosing: false,
    clientErrorHandler(error, socket) {
      if (socket.writable) socket.end(clientErrorResponse(error));
      else socket.destroy();
    },
  });
  // Response schemas document the answers (OpenAPI); bodies are plain JSON. The report is sent as bytes
  // serialized once per evaluation, and nothing may drop fields the schema does not list (fields may be
  // added), so no schema-compiled serializer is built: less memory and a faster start.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  const retryAfterSeconds = Math.max(
    1,
    Math.ceil((options.evaluationIntervalMs ?? parseDuration(DEFAULT_EVALUATION_INTERVAL)) / 1000),
  );
  const notReadyMessage = notReadyMessageOf(options.evaluationError);
  app.addSchema(reportJsonSchema());
  app.addSchema(ERROR_BODY_SCHEMA);
  app.addSchema(TARGETS_SCHEMA);
  app.addSchema(RULES_SCHEMA);
  app.addSchema(SERIES_SCHEMA);

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'workqueue-doctor',
        description:
          'Diagnoses of Kubernetes controller work queues from their client-go metrics: what is wrong with a ' +
          'controller and why, with the evidence, the likely cause, the fix and a runbook.',
        version: options.version ?? '0.0.0',
      },
      tags: [
        { name: 'diagnosis', description: 'The latest report' },
        { name: 'targets', description: 'Where the metrics come from' },
        { name: 'rules', description: 'The diagnoses and their thresholds' },
        { name: 'operations', description: 'Health and the service’s own metrics' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'Required on /api/v1 when the service runs with --api-token-file.',
          },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        json.$id === REPORT_SCHEMA_ID ? 'Report' : typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
  });
  await app.register(swaggerUi, { routePrefix: DOCS_PREFIX });

  // A callback hook (no promise per request); the log call is a level check unless debug is on.
  app.addHook('onResponse', (request, reply, done) => {
    request.log.debug(
      { method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime },
      'request',
    );
    done();
  });

  app.setErrorHandler(sendError);
  refuseWhatNodeAnswersBare(app);
  const guard = options.apiToken === undefined ? undefined : bearerGuard(options.apiToken);
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // Unknown paths under the API answer 401 like known ones, so routes cannot be probed without the token.
    if (guard !== undefined && path.startsWith(`${API_PREFIX}/`)) await guard(request, reply);
    const shown = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    return reply.code(404).send(errorBody('not_found', `No route ${request.method} ${shown}.`));
  });

  const answerCache = options.answerCache ?? DEFAULT_ANSWER_CACHE;
  const cache = createReportCache(options.report, { reports: answerCache.reports, queues: answerCache.queues });
  await app.register(
    async (api) => {
      if (guard !== undefined) api.addHook('onRequest', guard);
      await apiRoutes(api, {
        cache,
        seriesBodies: answerCache.series,
        report: options.report,
        ...(options.series !== undefined ? { series: options.series } : {}),
        targets: options.targets,
        rules: options.rules,
        retryAfterSeconds,
        notReadyMessage,
        authenticated: options.apiToken !== undefined,
      });
    },
    { prefix: API_PREFIX },
  );
  await app.register(opsRoutes, { ready: options.ready, metrics: options.metrics, retryAfterSeconds, notReadyMessage });
  await app.register(pageRoutes, {
    report: options.report,
    targets: options.targets,
    ...(options.series !== undefined ? { series: options.series } : {}),
    ...(options.apiToken !== undefined ? { apiToken: options.apiToken } : {}),
    signInLimits: limits.signIn,
    ...(options.secureCookie !== undefined ? { secureCookie: options.secureCookie } : {}),
    refreshSeconds: retryAfterSeconds,
    ...(options.page !== undefined ? { settings: options.page } : {}),
    ...(options.version !== undefined ? { version: options.version } : {}),
  });
  return app;
}

/** Checks `Authorization: Bearer <token>` in constant time; answers 401 otherwise. */
function bearerGuard(token: string) {
  const expected = digest(token);
  return async (request: FastifyRequest, reply: { header(name: string, value: string): unknown }): Promise<void> => {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const given = digest(match?.[1] ?? '');
    // Always compare, so a missing header takes as long as a wrong one.
    const same = timingSafeEqual(given, expected);
    if (match === null || !same) {
      reply.header('www-authenticate', 'Bearer realm="workqueue-doctor"');
      throw new ApiError('unauthorized');
    }
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * What Node's HTTP server would answer itself, without the error shape, answered in it: an HTTP/1.1 request
 * without a Host header (400, as RFC 9112 requires), an `Expect` other than `100-continue` (417), and `CONNECT`
 * (a method no route serves: 404, then the connection is closed).
 */
function refuseWhatNodeAnswersBare(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && request.headers.host === undefined) {
      reply.code(400).send(errorBody('bad_request', 'An HTTP/1.1 request needs a Host header.'));
      return;
    }
    done();
  });
  app.server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const { statusCode } = API_ERRORS.expectation_failed;
    response.writeHead(statusCode, { 'Content-Type': 'application/json; charset=utf-8', Connection: 'close' });
    response.end(JSON.stringify(errorBody('expectation_failed')));
  });
  app.server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.end(rawErrorResponse('not_found', 'No route for CONNECT.'));
  });
}

/** The message of a 503 `not_ready`: the default, or with why the last evaluation failed. */
function notReadyMessageOf(evaluationError: (() => string | undefined) | undefined): () => string | undefined {
  return () => {
    const error = evaluationError?.();
    return error === undefined ? undefined : `No evaluation has succeeded yet; the last one failed: ${error}`;
  };
}
