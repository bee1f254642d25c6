/**
 * The page at `/`, rendered on the server as one HTML document that reads in full without JavaScript: the fleet
 * as a list of queues, worst first (the report's order), each a `<details>` whose one-line summary says its
 * status and what is wrong, and whose body holds its findings (evidence, cause, fix, runbook, charts that
 * explain them), the rules not judged and why, and its observations; then the targets' health and the report's
 * errors. The script adds the filters (kept in the URL), draws the charts and refreshes the page.
 *
 * Contract:
 * - Rows needing attention (critical, warning, pending) are open when there are at most `OPEN_ATTENTION_LIMIT`
 *   of them; every other row, and every row of a larger fleet, is closed: one line each. An open row's charts
 *   travel inline (`<script type="application/json" id="wqd-series">`); a closed row's are fetched from
 *   `/queue-charts/<id>` when it is opened.
 * - Every interpolated string goes through `escapeHtml`; the inline data through `scriptJson` (html.ts).
 */
import type { QueueReport, Report } from '../../diagnosis/report.js';
import type { TargetsView } from '../../service/target-status.js';
import { formatDuration } from '../../util/duration.js';
import { assetPath, type PageAssets } from './assets.js';
import type { ChartData } from './chart-data.js';
import { chartPayload, type FigureSpec, queueFigures } from './chart-figures.js';
import { renderFilters } from './filters.js';
import { escapeHtml, plural, scriptJson, time } from './html.js';
import { type PageSettings, queueContexts } from './queue-context.js';
import { renderQueueRow } from './queue-row.js';
import { renderLegend, STATUS_LOOK, STATUS_ORDER } from './status.js';
import { renderErrors, renderTargets } from './targets.js';

export type PageInput = {
  readonly report: Report;
  readonly targets: TargetsView;
  /** The charts' data; undefined when it could not be computed (the page says so). */
  readonly charts: ChartData | undefined;
  readonly seriesError?: string;
  /** How often the page refreshes itself (the evaluation interval). */
  readonly refreshSeconds: number;
  /** Show a sign-out button (the browser holds a session cookie). */
  readonly signOut: boolean;
  readonly assets: PageAssets;
  readonly settings?: PageSettings;
  readonly version?: string;
};

/** The HTML helpers, also for other pages that write HTML (scripts/detection-curves.ts). */
export { escapeHtml, scriptJson } from './html.js';

/** At most this many rows needing attention are shown open; beyond, the list starts with every row closed. */
export const OPEN_ATTENTION_LIMIT = 25;

export function renderPage(input: PageInput): string {
  const { report, charts } = input;
  const contexts = queueContexts(report.queues, input.settings ?? {}, input.targets, charts);
  const open = openRows(report.queues);
  const figures: FigureSpec[] = [];
  const rows = contexts.map((context) => {
    const isOpen = open.has(context.queue.id);
    const own = isOpen && charts !== undefined ? queueFigures(context, charts) : undefined;
    if (own !== undefined) figures.push(...own);
    return renderQueueRow(context, { open: isOpen, figures: own, data: charts, evaluatedAt: report.evaluatedAt });
  });
  const window =
    charts === undefined ? undefined : formatDuration(charts.stepMs * Math.max(0, charts.timesMs.length - 1));
  const body = `<header class="top">
<h1>workqueue-doctor</h1>
<p>Evaluated at ${time(report.evaluatedAt)} over a ${escapeHtml(report.window)} window; refreshes every ${input.refreshSeconds} s.</p>
${input.signOut ? '<form method="post" action="/logout"><button type="submit">Sign out</button></form>' : ''}
</header>
<main data-refresh-seconds="${input.refreshSeconds}" data-evaluated-at="${escapeHtml(report.evaluatedAt)}">
<section class="fleet" aria-labelledby="fleet-title">
<h2 id="fleet-title">Queues</h2>
<p class="counts">${escapeHtml(statusCounts(report.queues))}${window === undefined ? '' : `; charts cover the last ${escapeHtml(window)}`}.${
    input.seriesError === undefined
      ? ''
      : ` <span class="error">Charts unavailable: ${escapeHtml(input.seriesError)}</span>`
  }</p>
${renderLegend()}
${renderFilters(contexts)}
${
  rows.length === 0
    ? '<p class="quiet">No work queues found yet.</p>'
    : `<div class="fleet-list">
<div class="list-head" aria-hidden="true"><span>status</span><span>queue</span><span>where</span><span>what</span></div>
${rows.join('\n')}
<p class="none" hidden>No queue matches the filters.</p>
</div>`
}
</section>
${renderTargets(input.targets)}
${renderErrors(report)}
${charts === undefined ? '' : `<script type="application/json" id="wqd-series">${scriptJson(chartPayload(figures, charts))}</script>`}
</main>`;
  return document('workqueue-doctor', body, input.assets, input.refreshSeconds, true, input.version);
}

/** The rows shown open (see the module contract). */
function openRows(queues: readonly QueueReport[]): ReadonlySet<string> {
  const attention = queues.filter((q) => ['firing', 'pending'].includes(STATUS_LOOK[q.status].group));
  return new Set(attention.length <= OPEN_ATTENTION_LIMIT ? attention.map((q) => q.id) : []);
}

/** The 401 answer to a browser: what is needed, and a form that posts the token to `/login`. */
export function renderLoginPage(assets: PageAssets, failed: boolean): string {
  const body = `<form class="login" method="post" action="/login">
<h1>workqueue-doctor</h1>
<p>This service runs with <code>--api-token-file</code>: enter the token from that file to see the diagnoses. The
browser keeps a session cookie (12 hours), never the token.</p>
${failed ? '<p class="error" role="alert">That is not the token the service was started with.</p>' : ''}
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Sign in</button>
</form>`;
  return document('workqueue-doctor: sign in', body, assets, 0, false);
}

/** The answer before the first evaluation has finished. */
export function renderNotReadyPage(assets: PageAssets, retrySeconds: number): string {
  const body = `<header class="top"><h1>workqueue-doctor</h1></header>
<main data-refresh-seconds="${retrySeconds}">
<p>No evaluation has finished yet: the first report comes after the first scrape and evaluation. This page
reloads itself.</p>
</main>`;
  return document('workqueue-doctor: starting', body, assets, retrySeconds, true);
}

function document(
  title: string,
  body: string,
  assets: PageAssets,
  refreshSeconds: number,
  scripts: boolean,
  version?: string,
): string {
  const head = [
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    version === undefined ? '' : `<meta name="generator" content="workqueue-doctor ${escapeHtml(version)}">`,
    `<title>${escapeHtml(title)}</title>`,
    // No favicon to fetch.
    '<link rel="icon" href="data:,">',
    refreshSeconds > 0 ? `<noscript><meta http-equiv="refresh" content="${refreshSeconds}"></noscript>` : '',
    `<link rel="stylesheet" href="${assetPath(assets.uplotStyle)}">`,
    `<link rel="stylesheet" href="${assetPath(assets.pageStyle)}">`,
    scripts ? `<script src="${assetPath(assets.uplotScript)}" defer></script>` : '',
    scripts ? `<script src="${assetPath(assets.pageScript)}" defer></script>` : '',
  ].filter((line) => line !== '');
  return `<!doctype html>
<html lang="en">
<head>
${head.join('\n')}
</head>
<body>
${body}
</body>
</html>
`;
}

function statusCounts(queues: readonly QueueReport[]): string {
  const parts = STATUS_ORDER.map((status) => [status, queues.filter((q) => q.status === status).length] as const)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  const total = plural(queues.length, 'queue');
  return parts.length === 0 ? total : `${total}: ${parts.join(', ')}`;
}
