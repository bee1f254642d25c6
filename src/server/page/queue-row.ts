/**
 * One queue of the fleet list: a `<details>` whose summary is the queue in one line (status, name, where it
 * runs, and what is wrong: each finding's one-line summary, a pending finding's time to fire, why a rule could
 * not be judged, or the few facts of a quiet queue), and whose body holds the findings (evidence, cause, fix,
 * runbook, charts), the rules not judged, the observations and the links.
 *
 * The row carries what the filters select by: `data-group` (the status filter's group), `data-rules` (the rules
 * of its findings), `data-controller`, `data-namespace`, `data-cluster` (each left out when empty); the search
 * reads its summary's text. An open row's summary keeps its line unless the row has findings (their articles say it).
 */
import { RULE_BY_ID } from '../../diagnosis/catalog.js';
import { formatValue } from '../../diagnosis/format.js';
import { type Finding, isFiring, type Observation, type UnknownRule } from '../../diagnosis/report.js';
import { evidenceTitle, quietFacts } from '../../diagnosis/text-report.js';
import { formatDuration } from '../../util/duration.js';
import type { ChartData } from './chart-data.js';
import { type FigureSpec, OVERVIEW_GROUP, renderChartPlace } from './chart-figures.js';
import { renderEvidence } from './evidence.js';
import { explainRule } from './finding-charts.js';
import { escapeHtml, externalLink, time } from './html.js';
import type { QueueContext } from './queue-context.js';
import { STATUS_LOOK, statusBadge } from './status.js';

export type RowOptions = {
  /** Shown open (its charts drawn at once) or closed (its charts drawn when opened). */
  readonly open: boolean;
  /** The queue's figures when open and charts are available. */
  readonly figures: readonly FigureSpec[] | undefined;
  readonly data: ChartData | undefined;
  readonly evaluatedAt: string;
};

export function renderQueueRow(context: QueueContext, options: RowOptions): string {
  const { queue } = context;
  // An attribute without a value is left out: 1,000 rows carry them.
  const data = (name: string, value: string | null | undefined): string =>
    value === null || value === undefined || value === '' ? '' : `data-${name}="${escapeHtml(value)}"`;
  const attributes = [
    `class="queue ${queue.status}"`,
    `id="q-${escapeHtml(queue.id)}"`,
    data('group', STATUS_LOOK[queue.status].group),
    data('rules', [...new Set(queue.findings.map((f) => f.rule))].join(' ')),
    data('controller', queue.queue.controller),
    data('namespace', context.namespace),
    data('cluster', context.cluster),
    options.open ? 'open' : '',
  ].filter((a) => a !== '');
  return `<details ${attributes.join(' ')}>
<summary>${statusBadge(queue.status)}<h2>${escapeHtml(queue.queue.name ?? queue.queue.target)}</h2>${renderWhere(context)}<span class="what">${renderWhat(
    context,
    options.evaluatedAt,
  )}</span></summary>
<div class="body">
${renderLinks(context)}
${renderBody(context, options)}
</div>
</details>`;
}

/** Where the queue runs: controller, namespace, cluster and target, each named. */
function renderWhere(context: QueueContext): string {
  const { queue } = context;
  const parts: string[] = [];
  if (queue.queue.controller !== null && queue.queue.controller !== queue.queue.name)
    parts.push(`controller <b>${escapeHtml(queue.queue.controller)}</b>`);
  if (context.namespace !== undefined) parts.push(`namespace <b>${escapeHtml(context.namespace)}</b>`);
  if (context.cluster !== undefined) parts.push(`cluster <b>${escapeHtml(context.cluster)}</b>`);
  parts.push(`target <b>${escapeHtml(queue.queue.target)}</b>`);
  return `<span class="where">${parts.map((p) => `<span>${p}</span>`).join(' ')}</span>`;
}

/** What is wrong, in one line per finding; why not judged; or the quiet facts. */
function renderWhat(context: QueueContext, evaluatedAt: string): string {
  const { queue } = context;
  if (queue.findings.length > 0) {
    return queue.findings
      .map(
        (f) =>
          `<span class="line">${isFiring(f) ? '' : `<span class="pending-note">${escapeHtml(pendingNote(f, evaluatedAt))}:</span> `}${escapeHtml(f.summary)}</span>`,
      )
      .join('');
  }
  const unknown = queue.unknown ?? [];
  const [first] = unknown;
  if (first !== undefined) {
    const more = unknown.length > 1 ? ` (and ${unknown.length - 1} more rules)` : '';
    return `<span class="line">Not judged: ${escapeHtml(ruleTitle(first.rule))}: ${escapeHtml(first.reason)}${more}</span>`;
  }
  return `<span class="line">${escapeHtml(quietLine(context))}</span>`;
}

function renderLinks(context: QueueContext): string {
  const links = [`<a href="#q-${escapeHtml(context.queue.id)}">Link to this queue</a>`];
  if (context.dashboardUrl !== undefined)
    links.push(externalLink(context.dashboardUrl, 'Grafana dashboard', 'grafana'));
  return `<p class="queue-links">${links.join(' · ')}</p>`;
}

function renderBody(context: QueueContext, options: RowOptions): string {
  const { queue } = context;
  const data = options.data;
  const place = (group: string): string =>
    data === undefined
      ? ''
      : renderChartPlace(queue.id, group, options.open ? (options.figures ?? []) : undefined, data);
  const findings = queue.findings.map((f) => renderFinding(context, f, place(f.rule), options.evaluatedAt)).join('\n');
  // A quiet queue's line stays in its summary when open; an unknown one's summary says why, its body the facts.
  const quiet =
    queue.findings.length > 0
      ? ''
      : `${queue.status === 'unknown' ? `<p class="quiet">${escapeHtml(quietLine(context))}</p>\n` : ''}${
          queue.status === 'standby' ? '' : place(OVERVIEW_GROUP)
        }`;
  return `${findings}${quiet}
${renderUnknown(queue.unknown ?? [])}
${renderObservations(queue.observations)}`;
}

function quietLine(context: QueueContext): string {
  const { queue } = context;
  if (queue.status === 'standby') return 'Standby replica (not the leader): no queues by design.';
  return `${queue.status === 'unknown' ? 'Not enough data yet: ' : 'No findings: '}${quietFacts(queue).join(', ')}.`;
}

function renderFinding(context: QueueContext, finding: Finding, charts: string, evaluatedAt: string): string {
  const settings = context.settings(finding.rule);
  const firing = isFiring(finding);
  const since =
    finding.since === null || finding.since === undefined ? '' : ` <small>holds since ${time(finding.since)}</small>`;
  const pending = firing
    ? ''
    : ` <small class="pending">pending: fires at ${finding.firesAt === undefined ? 'the end of its for' : time(finding.firesAt)} if it keeps holding${
        firesIn(finding, evaluatedAt) === undefined ? '' : ` (${escapeHtml(firesIn(finding, evaluatedAt) ?? '')})`
      }</small>`;
  const state = firing
    ? statusBadge(finding.severity)
    : `${statusBadge('pending')} <span class="severity">${escapeHtml(finding.severity)} when it fires</span>`;
  return `<article class="finding ${finding.severity}${firing ? '' : ' pending'}" data-rule="${escapeHtml(finding.rule)}" data-state="${escapeHtml(finding.state ?? 'firing')}">
<h3>${state} ${escapeHtml(ruleTitle(finding.rule))} <code>${escapeHtml(finding.rule)}</code>${since}${pending}</h3>
<p class="summary">${escapeHtml(finding.summary)}</p>
<div class="details">
${renderEvidence(finding.evidence, settings === undefined ? undefined : explainRule(settings))}
<div class="explain">
<dl class="advice"><dt>Cause</dt><dd class="cause">${escapeHtml(finding.cause)}</dd><dt>Fix</dt><dd class="fix">${escapeHtml(
    finding.fix,
  )}</dd><dt>Runbook</dt><dd>${externalLink(finding.runbook, finding.runbook, 'runbook')}</dd></dl>
${charts}
</div>
</div>
</article>`;
}

/** `pending, fires in 1m30s` (or `pending` when the report does not say when). */
function pendingNote(finding: Finding, evaluatedAt: string): string {
  const left = firesIn(finding, evaluatedAt);
  return left === undefined ? 'pending' : `pending, fires ${left}`;
}

/** How long after the evaluation a pending finding fires: `in 1m30s`, `now`; undefined when not said. */
function firesIn(finding: Finding, evaluatedAt: string): string | undefined {
  if (finding.firesAt === undefined) return undefined;
  const leftMs = Date.parse(finding.firesAt) - Date.parse(evaluatedAt);
  if (!Number.isFinite(leftMs)) return undefined;
  return leftMs <= 0 ? 'now' : `in ${formatDuration(Math.ceil(leftMs / 1000) * 1000)}`;
}

function ruleTitle(rule: string): string {
  return RULE_BY_ID.get(rule as Finding['rule'])?.title ?? rule;
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
