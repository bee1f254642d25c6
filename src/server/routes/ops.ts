/**
 * Operational routes, never behind the API token: liveness, readiness (after the first evaluation) and
 * the service's own metrics.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError, errorRef } from '../errors.js';
import { HEALTH_SCHEMA, METRICS_SCHEMA } from '../schemas.js';

export type OpsRoutesOptions = {
  readonly ready: () => boolean;
  readonly metrics: { metrics(): Promise<string>; readonly contentType: string };
  readonly retryAfterSeconds: number;
  /** The message of `not_ready` when it says more than the default (why the last evaluation failed). */
  readonly notReadyMessage?: () => string | undefined;
};

export async function opsRoutes(app: FastifyInstance, options: OpsRoutesOptions): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process answers',
        response: { 200: HEALTH_SCHEMA },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: a first evaluation has finished',
        response: { 200: HEALTH_SCHEMA, 503: errorRef },
      },
    },
    async (_request, reply) => {
      if (!options.ready()) {
        reply.header('retry-after', String(options.retryAfterSeconds));
        throw new ApiError('not_ready', options.notReadyMessage?.());
      }
      return { status: 'ready' as const };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        summary: "The service's own metrics, with one series per active finding",
        produces: ['text/plain'],
        response: { 200: METRICS_SCHEMA },
      },
    },
    async (_request, reply) => reply.type(options.metrics.contentType).send(await options.metrics.metrics()),
  );
}
