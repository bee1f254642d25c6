/**
 * The page at `/`, rendered on the server as one HTML document that reads in full without JavaScript: every
 * queue, worst first (the report's order), with its status, its findings (summary, evidence, cause, fix,
 * runbook link) and observations, charts of each finding's evidence over the chart window, the targets'
 * health and the report's errors. The charts are the only part that needs the script; without it their place
 * lists the latest, lowest and highest values.
 *
 * Every interpolated string goes through `escapeHtml` (text and attribute values alike); the series travel
 * as JSON in a `<script type="application/json">` block with `<` escaped, so nothing in a label can end it.
 */
import { formatNumberWithUnit, formatValue } from '../../diagnosis/format.js';
import {
  type Finding,
  isFiring,
  type Observation,
  type QueueReport,
  type QueueStatus,
  type Report,
  type UnknownRule,
} from '../../diagnosis/report.js';
import { SIGNAL_BY_ID } from '../../diagnosis/signals.js';
import { evidenceTitle, quietFacts } from '../../diagnosis/text-report.js';
import type { SignalValue } from '../../diagnosis/units.js';
import { formatDuration } from '../../promql/render.js';
import {
  CHART_BY_ID,
  type ChartDefinition,
  chartsForEvidence,
  OVERVIEW_CHARTS,
  type SeriesSet,
  type SeriesSignalId,
} from '../../service/queue-series.js';
import type { TargetsView } from '../../service/target-status.js';
import { assetPath, type PageAssets } from './assets.js';

export type PageInput = {
  readonly report: Report;
  readonly targets: TargetsView;
  /** The charts' data; undefined when it could not be computed (the page says so). */
  readonly series: SeriesSet | undefined;
  readonly seriesError?: string;
  /** How often the page refreshes itself (the evaluation interval). */
  readonly refreshSeconds: number;
  /** Show a sign-out button (the browser holds a session cookie). */
  readonly signOut: boolean;
  readonly assets: PageAssets;
  readonly version?: string;
};

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML text and for quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}

/** JSON that can sit inside a `<script>` element: no `<` (so no `</script>`), no line separators. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const STATUS_TITLE: Record<QueueStatus, string> = {
  critical: 'critical',
  warning: 'warning',
  pending: 'pending',
  unknown: 'unknown',
  standby: 'standby',
  ok: 'ok',
};

export function renderPage(input: PageInput): string {
  const { report, series } = input;
  const drawn = new Map<string, Set<string>>();
  const queues = report.queues.map((queue) => renderQueue(queue, series, drawn)).join('\n');
  const counts = statusCounts(report.queues);
  const window = series === undefined ? undefined : formatDuration(series.stepMs * (series.timesMs.length - 1));
  const body = `<header class="top">
<h1>workqueue-doctor</h1>
<p>Evaluated at ${time(report.evaluatedAt)} over a ${escapeHtml(report.window)} window; refreshes every ${input.refreshSeconds} s.</p>
${input.signOut ? '<form method="post" action="/logout"><button type="submit">Sign out</button></form>' : ''}
</header>
<main data-refresh-seconds="${input.refreshSeconds}" data-evaluated-at="${escapeHtml(report.evaluatedAt)}">
<section class="overview" aria-labelledby="overview-title">
<h2 id="overview-title">Queues</h2>
<p>${escapeHtml(counts)}${window === undefined ? '' : `; charts cover the last ${escapeHtml(window)}`}.${
    input.seriesError === undefined
      ? ''
      : ` <span class="error">Charts unavailable: ${escapeHtml(input.seriesError)}</span>`
  }</p>
${renderOverview(report.queues)}
</section>
${queues}
${renderTargets(input.targets)}
${renderErrors(report)}
${series === undefined ? '' : `<script type="application/json" id="wqd-series">${scriptJson(seriesPayload(series, drawn))}</script>`}
</main>`;
  return document('workqueue-doctor', body, input.assets, input.refreshSeconds, true, input.version);
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
  const order: QueueStatus[] = ['critical', 'warning', 'pending', 'unknown', 'standby', 'ok'];
  const parts = order
    .map((status) => [status, queues.filter((q) => q.status === status).length] as const)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  const total = `${queues.length} queue${queues.length === 1 ? '' : 's'}`;
  return parts.length === 0 ? total : `${total}: ${parts.join(', ')}`;
}

function badge(status: string, text: string = status): string {
  return `<span class="badge ${escapeHtml(status)}">${escapeHtml(text)}</span>`;
}

function queueTitle(queue: QueueReport): string {
  return queue.queue.name ?? queue.queue.target;
}

function renderOverview(queues: readonly QueueReport[]): string {
  if (queues.length === 0) return '<p class="quiet">No work queues found yet.</p>';
  const rows = queues.map((q) => {
    const rules = q.findings.map((f) => escapeHtml(isFiring(f) ? f.rule : `${f.rule} (pending)`)).join(', ');
    const observations = q.observations.map((o) => escapeHtml(o.id)).join(', ');
    return `<tr><td>${badge(q.status, STATUS_TITLE[q.status])}</td><td><a href="#q-${escapeHtml(q.id)}">${escapeHtml(
      queueTitle(q),
    )}</a></td><td>${escapeHtml(q.queue.controller ?? '')}</td><td>${escapeHtml(q.queue.target)}</td><td>${
      rules === '' ? '<span class="muted">none</span>' : rules
    }</td><td>${observations}</td></tr>`;
  });
  return `<table class="list">
<thead><tr><th>status</th><th>queue</th><th>controller</th><th>target</th><th>findings</th><th>observations</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

function renderQueue(queue: QueueReport, series: SeriesSet | undefined, drawn: Map<string, Set<string>>): string {
  const values = series?.queues.get(queue.id);
  const charts = (list: readonly ChartDefinition[]): string =>
    renderCharts(queue.id, list, values, series?.stepMs, drawn);
  const controller =
    queue.queue.controller !== null && queue.queue.controller !== queue.queue.name
      ? ` · controller ${escapeHtml(queue.queue.controller)}`
      : '';
  const findings = queue.findings.map((f) => renderFinding(f, charts(chartsForEvidence(f.evidence)))).join('\n');
  const quiet =
    queue.findings.length > 0
      ? ''
      : `<p class="quiet">${escapeHtml(quietLine(queue))}</p>\n${charts(
          OVERVIEW_CHARTS.map((id) => CHART_BY_ID.get(id)).filter((c) => c !== undefined),
        )}`;
  return `<section class="queue ${escapeHtml(queue.status)}" id="q-${escapeHtml(queue.id)}">
<header>${badge(queue.status, STATUS_TITLE[queue.status])} <h2>${escapeHtml(queueTitle(queue))}</h2> <small>target ${escapeHtml(
    queue.queue.target,
  )}${controller}</small></header>
${findings}${quiet}
${renderUnknown(queue.unknown ?? [])}
${renderObservations(queue.observations)}
</section>`;
}

function quietLine(queue: QueueReport): string {
  if (queue.status === 'standby') return 'Standby replica (not the leader): no queues by design.';
  return `${queue.status === 'unknown' ? 'Not enough data yet: ' : 'No findings: '}${quietFacts(queue).join(', ')}.`;
}

function renderFinding(finding: Finding, charts: string): string {
  const since =
    finding.since === null || finding.since === undefined ? '' : ` <small>since ${time(finding.since)}</small>`;
  const pending = isFiring(finding)
    ? ''
    : ` <small class="pending">pending: fires at ${finding.firesAt === undefined ? 'the end of its for' : time(finding.firesAt)} if it keeps holding</small>`;
  return `<article class="finding${isFiring(finding) ? '' : ' pending'}" data-rule="${escapeHtml(finding.rule)}" data-state="${escapeHtml(finding.state ?? 'firing')}">
<h3>${badge(isFiring(finding) ? finding.severity : 'pending', isFiring(finding) ? finding.severity : `pending ${finding.severity}`)} ${escapeHtml(finding.rule)}${since}${pending}</h3>
<p class="summary">${escapeHtml(finding.summary)}</p>
<div class="details">
${renderEvidence(finding.evidence)}
<div class="explain">
<dl class="advice"><dt>Cause</dt><dd class="cause">${escapeHtml(finding.cause)}</dd><dt>Fix</dt><dd class="fix">${escapeHtml(
    finding.fix,
  )}</dd><dt>Runbook</dt><dd>${link(finding.runbook)}</dd></dl>
${charts}
</div>
</div>
</article>`;
}

function renderEvidence(evidence: Readonly<Record<string, SignalValue>>): string {
  const rows = Object.entries(evidence).map(
    ([id, value]) =>
      `<tr><th scope="row">${escapeHtml(evidenceTitle(id))}</th><td>${escapeHtml(formatValue(value))}</td></tr>`,
  );
  return rows.length === 0 ? '' : `<table class="evidence"><tbody>\n${rows.join('\n')}\n</tbody></table>`;
}

/** The rules that could not be judged, each with why. */
function renderUnknown(unknown: readonly UnknownRule[]): string {
  if (unknown.length === 0) return '';
  const items = unknown.map((u) => `<li><strong>${escapeHtml(u.rule)}</strong>: ${escapeHtml(u.reason)}</li>`);
  return `<h3>Not judged <small>rules without the data they need yet</small></h3>
<ul class="unknown">
${items.join('\n')}
</ul>`;
}

function renderObservations(observations: readonly Observation[]): string {
  if (observations.length === 0) return '';
  const items = observations.map((o) => {
    const evidence = Object.entries(o.evidence)
      .map(([id, value]) => `${evidenceTitle(id)} ${formatValue(value)}`)
      .join(', ');
    return `<li><strong>${escapeHtml(o.id)}</strong>: ${escapeHtml(o.summary)}${
      evidence === '' ? '' : ` <small>(${escapeHtml(evidence)})</small>`
    }</li>`;
  });
  return `<h3>Observations <small>what the metrics suggest but cannot prove; not findings</small></h3>
<ul class="observations">
${items.join('\n')}
</ul>`;
}

/** A link when the runbook is an http(s) URL, plain text otherwise. */
function link(url: string): string {
  const safe = /^https?:\/\//i.test(url);
  return safe
    ? `<a class="runbook" href="${escapeHtml(url)}" rel="noopener noreferrer">${escapeHtml(url)}</a>`
    : escapeHtml(url);
}

function renderCharts(
  queueId: string,
  charts: readonly ChartDefinition[],
  values: Readonly<Record<SeriesSignalId, readonly (number | null)[]>> | undefined,
  stepMs: number | undefined,
  drawn: Map<string, Set<string>>,
): string {
  if (values === undefined || stepMs === undefined) return '';
  const withData = charts.filter((c) => c.signals.some((s) => values[s].some((v) => v !== null)));
  if (withData.length === 0) return '';
  const figures = withData.map((chart) => {
    const set = drawn.get(queueId) ?? new Set<string>();
    for (const s of chart.signals) set.add(s);
    drawn.set(queueId, set);
    const lines = chart.signals.map((s) => `<li>${escapeHtml(fallbackLine(s, chart, values[s]))}</li>`);
    return `<figure class="chart" data-queue="${escapeHtml(queueId)}" data-chart="${escapeHtml(chart.id)}">
<figcaption>${escapeHtml(chart.title)}</figcaption>
<div class="plot"><ul>${lines.join('')}</ul></div>
</figure>`;
  });
  return `<div class="charts">\n${figures.join('\n')}\n</div>`;
}

/** What a chart's place says without the script: latest, lowest and highest value of one line. */
function fallbackLine(id: SeriesSignalId, chart: ChartDefinition, values: readonly (number | null)[]): string {
  const title = SIGNAL_BY_ID.get(id)?.title ?? id;
  const present = values.filter((v): v is number => v !== null);
  if (present.length === 0) return `${title}: no data`;
  const fmt = (n: number): string => formatNumberWithUnit(n, chart.unit);
  const latest = present[present.length - 1] as number;
  return `${title}: latest ${fmt(latest)}, lowest ${fmt(Math.min(...present))}, highest ${fmt(Math.max(...present))}`;
}

/** The inline data the script draws: times in seconds, the charts drawn, each drawn queue's lines. */
function seriesPayload(series: SeriesSet, drawn: ReadonlyMap<string, ReadonlySet<string>>): unknown {
  const charts = Object.fromEntries(
    [...CHART_BY_ID.values()].map((c) => [
      c.id,
      {
        title: c.title,
        unit: c.unit,
        signals: c.signals.map((s) => ({ id: s, title: SIGNAL_BY_ID.get(s)?.title ?? s })),
      },
    ]),
  );
  const queues: Record<string, Record<string, (number | null)[]>> = {};
  for (const [id, signals] of drawn) {
    const values = series.queues.get(id);
    if (values === undefined) continue;
    queues[id] = Object.fromEntries(
      [...signals].map((s) => [
        s,
        values[s as SeriesSignalId].map((v) => (v === null ? null : Number(v.toPrecision(6)))),
      ]),
    );
  }
  return { times: series.timesMs.map((t) => t / 1000), stepSeconds: series.stepMs / 1000, charts, queues };
}

function renderTargets(view: TargetsView): string {
  if (view.mode === 'prometheus') {
    const p = view.prometheus;
    return `<section class="targets" id="targets" aria-labelledby="targets-title">
<h2 id="targets-title">Targets</h2>
<table class="list">
<thead><tr><th>Prometheus</th><th>health</th><th>last checked</th><th>version</th><th>last error</th></tr></thead>
<tbody><tr><td><code>${escapeHtml(p.url)}</code></td><td>${badge(p.up ? 'up' : 'down')}</td><td>${
      p.checkedAt === null ? 'never' : time(p.checkedAt)
    }</td><td>${escapeHtml(p.buildInfo?.version ?? '')}</td><td>${
      p.lastError === null ? '' : `${escapeHtml(p.lastError.message)} <small>at ${time(p.lastError.at)}</small>`
    }</td></tr></tbody>
</table>
</section>`;
  }
  const discovery =
    view.discovery === undefined
      ? ''
      : `<p>Kubernetes discovery ${badge(view.discovery.healthy ? 'up' : 'down', view.discovery.healthy ? 'healthy' : 'failing')}; last sync ${
          view.discovery.lastSync === null ? 'never' : time(view.discovery.lastSync)
        }${view.discovery.lastError === null ? '' : `; last error: ${escapeHtml(view.discovery.lastError.message)}`}</p>`;
  const rows = view.targets.map(
    (t) =>
      `<tr><td>${escapeHtml(t.target)}</td><td><code>${escapeHtml(t.url)}</code></td><td>${badge(t.up ? 'up' : 'down')}</td><td>${
        t.lastScrape === null ? 'never' : time(t.lastScrape)
      }${t.lastDurationSeconds === null ? '' : ` <small>(${escapeHtml(formatNumberWithUnit(t.lastDurationSeconds, 's'))})</small>`}</td><td>${
        t.samples ?? ''
      }</td><td>${t.consecutiveFailures}</td><td>${
        t.lastError === null
          ? ''
          : `<code>${escapeHtml(t.lastError.code)}</code> ${escapeHtml(t.lastError.message)} <small>at ${time(t.lastError.at)}</small>`
      }</td></tr>`,
  );
  return `<section class="targets" id="targets" aria-labelledby="targets-title">
<h2 id="targets-title">Targets</h2>
${discovery}
${
  rows.length === 0
    ? '<p class="quiet">No targets.</p>'
    : `<table class="list">
<thead><tr><th>target</th><th>URL</th><th>health</th><th>last scrape</th><th>samples</th><th>failures in a row</th><th>last error</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`
}
</section>`;
}

function renderErrors(report: Report): string {
  if (report.errors.length === 0) return '';
  const items = report.errors.map(
    (e) =>
      `<li><strong>${escapeHtml(e.target)}</strong>: <code>${escapeHtml(e.code)}</code> ${escapeHtml(e.message)}</li>`,
  );
  return `<section class="errors" aria-labelledby="errors-title">
<h2 id="errors-title">Errors</h2>
<ul>
${items.join('\n')}
</ul>
</section>`;
}

/** An RFC 3339 time shown as `YYYY-MM-DD HH:MM:SS UTC`. */
function time(iso: string): string {
  const shown = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : iso;
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(shown)}</time>`;
}
