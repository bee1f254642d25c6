/**
 * The page for people at `/` (see `page/render.ts`), its static files under `/assets/`, and, when the service
 * runs with an API token, `POST /login` and `POST /logout`.
 *
 * Access: with a token configured, `/` answers to the same `Authorization: Bearer <token>` as `/api/v1`, or
 * to the session cookie `/login` sets after comparing a posted token in constant time (`page/session.ts`);
 * anything else gets 401 with the sign-in form. Sign-in attempts are throttled per client address
 * (`client-throttle.ts`: 429 `too_many_requests` with `Retry-After` beyond the burst), and failed ones are logged
 * as one summary line per window (`sign-in-failures.ts`), never one line per attempt. The cookie is `Secure` when
 * the request came over HTTPS (`request.protocol`, which believes `X-Forwarded-Proto` only from the proxies
 * fastify's `trustProxy` trusts) or when `secureCookie` says so.
 *
 * `/assets/*` is open: it is uPlot and the page's own script and stylesheet, the same bytes for everyone, nothing
 * from the report (the sign-in form uses the stylesheet).
 *
 * The page is rendered once per report, targets' state and sign-out button, compressed once (`CachedBody`),
 * and served with a strict Content-Security-Policy: scripts and styles from the service only.
 *
 * `GET /queue-charts/:id` (same access as `/`) answers the charts of one queue of the latest report, as the page
 * carries inline the charts of its open rows (`ChartPayload`): the script fetches it when a closed row is opened.
 * 404 `queue_not_found` for a queue the report lacks, 503 `not_ready` before the first report or without charts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { QueueReport, Report } from '../../diagnosis/report.js';
import type { QueueSeries } from '../../service/queue-series.js';
import type { TargetsView } from '../../service/target-status.js';
import { CachedBody, sendCached } from '../cached-body.js';
import { createClientThrottle, type ThrottleLimits } from '../client-throttle.js';
import { errorBody } from '../errors.js';
import { ASSETS_PREFIX, pageAssets } from '../page/assets.js';
import { type ChartData, fromSeries } from '../page/chart-data.js';
import { chartPayload, queueFigures, signalsToExplain } from '../page/chart-figures.js';
import { type PageSettings, queueContexts } from '../page/queue-context.js';
import { renderLoginPage, renderNotReadyPage, renderPage } from '../page/render.js';
import { type PageSessions, pageSessions } from '../page/session.js';
import { createSignInFailures } from '../sign-in-failures.js';

export const HTML_CONTENT_TYPE = 'text/html; charset=utf-8';

/** Scripts and styles from the service only; the page posts forms to itself and is never framed. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export type PageRoutesOptions = {
  readonly report: () => Report | undefined;
  readonly targets: () => TargetsView;
  /** The charts' data; without it the page has no charts. */
  readonly series?: QueueSeries;
  /** When set, `/` needs this bearer token or a session cookie. */
  readonly apiToken?: string;
  /** Sign-in attempts allowed per client address. */
  readonly signInLimits: ThrottleLimits;
  /** Always mark the session cookie `Secure` (the service is reached over HTTPS however the request arrives). */
  readonly secureCookie?: boolean;
  /** The page refreshes itself this often (the evaluation interval). */
  readonly refreshSeconds: number;
  /** What the page reads of the configuration (thresholds in force, placement labels, Grafana). */
  readonly settings?: PageSettings;
  readonly version?: string;
};

type Access = 'open' | 'bearer' | 'cookie' | 'denied';

export async function pageRoutes(app: FastifyInstance, options: PageRoutesOptions): Promise<void> {
  const assets = pageAssets();
  const sessions = options.apiToken === undefined ? undefined : pageSessions(options.apiToken);
  const hidden = { hide: true } as const;

  const access = (request: FastifyRequest): Access => {
    if (sessions === undefined) return 'open';
    const header = request.headers.authorization;
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      return sessions.tokenMatches(match?.[1] ?? '') && match !== null ? 'bearer' : 'denied';
    }
    return sessions.valid(request.headers.cookie) ? 'cookie' : 'denied';
  };

  const html = (reply: FastifyReply): FastifyReply =>
    reply
      .header('content-security-policy', PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'private, no-cache');

  const signIn = (reply: FastifyReply, failed: boolean): FastifyReply =>
    html(reply)
      .code(401)
      .header('www-authenticate', 'Bearer realm="workqueue-doctor"')
      .type(HTML_CONTENT_TYPE)
      .send(renderLoginPage(assets, failed));

  /**
   * One rendering per report and sign-out button: the targets' table is as it was when the page was rendered for
   * the report (it changes with every scrape; rendering and compressing on each would cost every request).
   */
  const rendered = new Map<string, { report: Report; body: CachedBody }>();

  app.get('/', { schema: hidden }, async (request, reply) => {
    const granted = access(request);
    if (granted === 'denied') return signIn(reply, false);
    const report = options.report();
    if (report === undefined) {
      return html(reply)
        .code(503)
        .header('retry-after', String(options.refreshSeconds))
        .type(HTML_CONTENT_TYPE)
        .send(renderNotReadyPage(assets, Math.min(5, options.refreshSeconds)));
    }
    const signOut = granted === 'cookie';
    const key = String(signOut);
    let entry = rendered.get(key);
    if (entry === undefined || entry.report !== report) {
      const targets = options.targets();
      const { charts, seriesError } = await chartsOf(report, report.queues);
      if (seriesError !== undefined) request.log.warn({ err: seriesError }, 'chart series failed');
      const page = renderPage({
        report,
        targets,
        charts,
        ...(seriesError !== undefined ? { seriesError } : {}),
        refreshSeconds: options.refreshSeconds,
        signOut,
        assets,
        ...(options.settings !== undefined ? { settings: options.settings } : {}),
        ...(options.version !== undefined ? { version: options.version } : {}),
      });
      entry = { report, body: new CachedBody(page, HTML_CONTENT_TYPE) };
      // A failed series is not kept: the next request tries again.
      if (seriesError === undefined) rendered.set(key, entry);
    }
    return sendCached(request, html(reply), entry.body, sessions === undefined ? [] : ['authorization', 'cookie']);
  });

  /** The chart data of `queues` of `report`: the chart signals, and the other signals their findings' charts draw. */
  const chartsOf = async (
    report: Report,
    queues: readonly QueueReport[],
  ): Promise<{ charts: ChartData | undefined; seriesError?: string }> => {
    if (options.series === undefined) return { charts: undefined };
    try {
      const set = await options.series.forReport(report);
      const others = await options.series.signalsFor(report, signalsToExplain(queues, options.settings?.overrides));
      return { charts: fromSeries(set, others) };
    } catch (error) {
      return { charts: undefined, seriesError: error instanceof Error ? error.message : String(error) };
    }
  };

  app.get<{ Params: { id: string } }>('/queue-charts/:id', { schema: hidden }, async (request, reply) => {
    const granted = access(request);
    if (granted === 'denied') {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="workqueue-doctor"')
        .send(errorBody('unauthorized', 'Sign in on the page first.'));
    }
    const report = options.report();
    const queue = report?.queues.find((q) => q.id === request.params.id);
    if (report === undefined) return reply.code(503).send(errorBody('not_ready', 'No evaluation has finished yet.'));
    if (queue === undefined) {
      return reply
        .code(404)
        .send(
          errorBody('queue_not_found', `No queue with id "${request.params.id.slice(0, 200)}" in the latest report.`),
        );
    }
    const { charts, seriesError } = await chartsOf(report, [queue]);
    if (charts === undefined) {
      return reply
        .code(503)
        .send(errorBody('not_ready', `Charts unavailable${seriesError === undefined ? '' : `: ${seriesError}`}.`));
    }
    const [context] = queueContexts([queue], options.settings ?? {}, options.targets(), charts);
    const figures = context === undefined ? [] : queueFigures(context, charts);
    return reply
      .header('cache-control', 'private, no-cache')
      .header('x-content-type-options', 'nosniff')
      .send({ evaluatedAt: report.evaluatedAt, ...chartPayload(figures, charts) });
  });

  app.get<{ Params: { name: string } }>(`${ASSETS_PREFIX}/:name`, { schema: hidden }, async (request, reply) => {
    const asset = assets.byName.get(request.params.name);
    if (asset === undefined) {
      const path = request.url.split('?')[0] ?? '';
      return reply
        .code(404)
        .send({ error: { code: 'not_found', message: `No route ${request.method} ${path.slice(0, 200)}.` } });
    }
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .type(asset.contentType)
      .send(asset.bytes);
  });

  if (sessions !== undefined) await sessionRoutes(app, sessions, signIn, options);
}

async function sessionRoutes(
  app: FastifyInstance,
  sessions: PageSessions,
  signIn: (reply: FastifyReply, failed: boolean) => FastifyReply,
  options: Pick<PageRoutesOptions, 'signInLimits' | 'secureCookie'>,
): Promise<void> {
  const hidden = { hide: true } as const;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
  const secure = (request: FastifyRequest): boolean => options.secureCookie === true || request.protocol === 'https';
  const throttle = createClientThrottle(options.signInLimits);
  const failures = createSignInFailures((entry, message) => app.log.warn(entry, message));
  app.addHook('onClose', (_instance, done) => {
    failures.flush();
    done();
  });

  app.post<{ Body: Record<string, string> | undefined }>('/login', { schema: hidden }, async (request, reply) => {
    const waitSeconds = throttle.take(request.ip);
    if (waitSeconds !== undefined) {
      failures.throttled(request.ip);
      return reply
        .code(429)
        .header('retry-after', String(waitSeconds))
        .send(
          errorBody('too_many_requests', `Too many sign-in attempts from this address; try again in ${waitSeconds} s.`),
        );
    }
    const given = typeof request.body?.token === 'string' ? request.body.token.trim() : '';
    if (!sessions.tokenMatches(given)) {
      failures.wrongToken(request.ip);
      return signIn(reply, true);
    }
    return reply
      .code(303)
      .header('set-cookie', sessions.issue(secure(request)))
      .header('location', '/')
      .send();
  });

  app.post('/logout', { schema: hidden }, async (request, reply) =>
    reply
      .code(303)
      .header('set-cookie', sessions.clear(secure(request)))
      .header('location', '/')
      .send(),
  );
}
