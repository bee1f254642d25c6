/**
 * `/api/v1/*`: the report (all queues, filtered; one queue), one queue's chart series, the targets' health
 * and the rule catalog.
 * Handlers only read what the service computed; none of them fetches anything, least of all a URL taken
 * from the request.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { QueueStatus, Report } from '../../diagnosis/report.js';
import type { RuleId } from '../../diagnosis/rule.js';
import { SIGNAL_BY_ID } from '../../diagnosis/signals.js';
import { type QueueSeries, SERIES_SIGNALS, type SeriesSet, type SeriesSignalId } from '../../service/queue-series.js';
import type { TargetsView } from '../../service/target-status.js';
import { BodyCache, type BodyCacheLimits } from '../body-cache.js';
import { CachedBody, sendCached } from '../cached-body.js';
import { ApiError, errorRef } from '../errors.js';
import type { ReportCache } from '../report-cache.js';
import type { RulesView } from '../rules-view.js';
import {
  DIAGNOSIS_QUERY_SCHEMA,
  QUEUE_PARAMS_SCHEMA,
  QUEUE_REPORT_REF,
  REPORT_REF,
  SERIES_QUERY_SCHEMA,
} from '../schemas.js';

export type ApiRoutesOptions = {
  readonly cache: ReportCache;
  /** Bounds of the cached chart series bodies. */
  readonly seriesBodies: BodyCacheLimits;
  /** The latest report (for the series route). */
  readonly report: () => Report | undefined;
  /** The chart series; without it there is no series route. */
  readonly series?: QueueSeries;
  readonly targets: () => TargetsView;
  /** Serialized once: the overrides do not change while the service runs. */
  readonly rules: RulesView;
  /** Seconds a client should wait before asking again when no report exists yet. */
  readonly retryAfterSeconds: number;
  /** The message of `not_ready` when it says more than the default (why the last evaluation failed). */
  readonly notReadyMessage?: () => string | undefined;
  /** Whether the routes ask for a bearer token (documents the 401 answer). */
  readonly authenticated: boolean;
};

export async function apiRoutes(api: FastifyInstance, options: ApiRoutesOptions): Promise<void> {
  const { cache } = options;
  const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, errorRef]));
  const guarded = options.authenticated ? [401] : [];
  const security = [{ bearerAuth: [] }];
  const notReady = (reply: FastifyReply): never => {
    reply.header('retry-after', String(options.retryAfterSeconds));
    throw new ApiError('not_ready', options.notReadyMessage?.());
  };

  api.get<{ Querystring: { status?: QueueStatus[]; rule?: RuleId[] } }>(
    '/diagnosis',
    {
      schema: {
        tags: ['diagnosis'],
        summary: 'The latest diagnosis of every queue',
        description:
          'The report of the latest evaluation (the shape of `diagnose --output json`), worst queues first. ' +
          '`status` and `rule` narrow the queues; `errors` always lists the targets that could not be read. ' +
          '503 `not_ready` until the first evaluation has finished.',
        security,
        querystring: DIAGNOSIS_QUERY_SCHEMA,
        response: { 200: REPORT_REF, ...errors(400, ...guarded, 503) },
      },
      preValidation: splitListParameters(['status', 'rule']),
    },
    async (request, reply) => {
      const body = cache.report({
        ...(request.query.status !== undefined ? { status: request.query.status } : {}),
        ...(request.query.rule !== undefined ? { rule: request.query.rule } : {}),
      });
      if (body === undefined) return notReady(reply);
      return sendCached(request, reply, body);
    },
  );

  api.get<{ Params: { id: string } }>(
    '/queues/:id',
    {
      schema: {
        tags: ['diagnosis'],
        summary: 'The latest diagnosis of one queue',
        description:
          'One entry of the report by its `id`. 404 `queue_not_found` when the latest report has no such queue.',
        security,
        params: QUEUE_PARAMS_SCHEMA,
        response: { 200: QUEUE_REPORT_REF, ...errors(400, ...guarded, 404, 503) },
      },
    },
    async (request, reply) => {
      const body = cache.queue(request.params.id);
      if (body === undefined) return notReady(reply);
      if (body === null)
        throw new ApiError('queue_not_found', `No queue with id "${request.params.id}" in the latest report.`);
      return sendCached(request, reply, body);
    },
  );

  if (options.series !== undefined) {
    const series = options.series;
    // One body per queue and choice of signals, per series set (so per report); bounded like the report's.
    let bodiesOf: SeriesSet | undefined;
    const bodies = new BodyCache<string>(options.seriesBodies);
    api.get<{ Params: { id: string }; Querystring: { signals?: SeriesSignalId[] } }>(
      '/queues/:id/series',
      {
        schema: {
          tags: ['diagnosis'],
          summary: 'Recent history of one queue, for charts',
          description:
            'The chart signals of one queue (depth, add and completion rates, busy and max workers, longest-running ' +
            'sync, reconcile error rate) at evenly spaced times (30 s or more, at most 121 points) over the chart ' +
            'window, ending at the evaluation time of the latest report: the same expressions the diagnoses read, ' +
            'evaluated once per evaluation. 404 `queue_not_found` when the latest report has no such queue.',
          security,
          params: QUEUE_PARAMS_SCHEMA,
          querystring: SERIES_QUERY_SCHEMA,
          response: { 200: { $ref: 'QueueSeries#' }, ...errors(400, ...guarded, 404, 503) },
        },
        preValidation: splitListParameters(['signals']),
      },
      async (request, reply) => {
        const report = options.report();
        if (report === undefined) return notReady(reply);
        const { id } = request.params;
        if (!report.queues.some((q) => q.id === id))
          throw new ApiError('queue_not_found', `No queue with id "${id}" in the latest report.`);
        const set = await series.forReport(report);
        if (set !== bodiesOf) {
          bodiesOf = set;
          bodies.clear();
        }
        const wanted = request.query.signals?.length ? new Set(request.query.signals) : undefined;
        const signals = SERIES_SIGNALS.filter((s) => wanted === undefined || wanted.has(s));
        const key = `${id}|${signals.join(',')}`;
        let body = bodies.get(key);
        if (body === undefined) {
          const values = set.queues.get(id);
          body = new CachedBody(
            JSON.stringify({
              id,
              evaluatedAt: set.evaluatedAt,
              stepSeconds: set.stepMs / 1000,
              times: set.timesMs.map((t) => t / 1000),
              series: Object.fromEntries(
                signals.map((s) => {
                  const definition = SIGNAL_BY_ID.get(s);
                  return [
                    s,
                    {
                      title: definition?.title ?? s,
                      unit: definition?.unit ?? 'ratio',
                      values: values?.[s] ?? set.timesMs.map(() => null),
                    },
                  ];
                }),
              ),
            }),
          );
          bodies.set(key, body);
        }
        return sendCached(request, reply, body);
      },
    );
  }

  api.get(
    '/targets',
    {
      schema: {
        tags: ['targets'],
        summary: 'Scrape health of the targets, or the Prometheus server in Prometheus mode',
        security,
        response: { 200: { $ref: 'Targets#' }, ...errors(...guarded) },
      },
    },
    async () => options.targets(),
  );

  const rulesBody = new CachedBody(JSON.stringify(options.rules));
  api.get(
    '/rules',
    {
      schema: {
        tags: ['rules'],
        summary: 'The diagnosis catalog with the thresholds in force',
        description:
          'Every rule with its title, severity, thresholds in force (with units and descriptions), `for`, the ' +
          'alert expression (PromQL) rendered with those thresholds, and its meaning; then the queue-specific overrides; ' +
          'then, apart from the rules, the observations (reported with the queues, never alerted on).',
        security,
        response: { 200: { $ref: 'Rules#' }, ...errors(...guarded) },
      },
    },
    async (request, reply) => sendCached(request, reply, rulesBody),
  );
}

/** Lets `?status=warning,critical` mean the same as `?status=warning&status=critical`. */
function splitListParameters(names: readonly string[]) {
  // A callback hook, not an async one: no promise per request on the hottest route.
  return (request: FastifyRequest, _reply: FastifyReply, done: () => void): void => {
    const query = request.query as Record<string, unknown>;
    for (const name of names) {
      const value = query[name];
      if (value === undefined) continue;
      const items = (Array.isArray(value) ? value : [value]).flatMap((v) =>
        typeof v === 'string' ? v.split(',') : [v],
      );
      query[name] = items.map((v) => (typeof v === 'string' ? v.trim() : v)).filter((v) => v !== '');
    }
    done();
  };
}
