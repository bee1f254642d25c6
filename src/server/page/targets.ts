/**
 * Where the numbers come from, at the end of the page: the scrape targets' health (or the Prometheus server's)
 * and the report's errors. The tables name each cell (`data-label`), so that on a narrow screen each row reads
 * as a list of named values.
 */
import { formatNumberWithUnit } from '../../diagnosis/format.js';
import type { Report } from '../../diagnosis/report.js';
import type { TargetsView } from '../../service/target-status.js';
import { escapeHtml, time } from './html.js';
import { badge } from './status.js';

/** A table whose cells carry their column's name (`data-label`). */
function table(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  const head = columns.map((c) => `<th scope="col">${escapeHtml(c)}</th>`).join('');
  const body = rows.map(
    (cells) =>
      `<tr>${cells.map((cell, i) => `<td data-label="${escapeHtml(columns[i] ?? '')}">${cell}</td>`).join('')}</tr>`,
  );
  return `<table class="list">
<thead><tr>${head}</tr></thead>
<tbody>
${body.join('\n')}
</tbody>
</table>`;
}

export function renderTargets(view: TargetsView): string {
  if (view.mode === 'prometheus') {
    const p = view.prometheus;
    return `<section class="targets" id="targets" aria-labelledby="targets-title">
<h2 id="targets-title">Targets</h2>
${table(
  ['Prometheus', 'health', 'last checked', 'version', 'last error'],
  [
    [
      `<code>${escapeHtml(p.url)}</code>`,
      badge(p.up ? 'up' : 'down'),
      p.checkedAt === null ? 'never' : time(p.checkedAt),
      escapeHtml(p.buildInfo?.version ?? ''),
      p.lastError === null ? '' : `${escapeHtml(p.lastError.message)} <small>at ${time(p.lastError.at)}</small>`,
    ],
  ],
)}
</section>`;
  }
  const discovery =
    view.discovery === undefined
      ? ''
      : `<p>Kubernetes discovery ${badge(view.discovery.healthy ? 'up' : 'down', view.discovery.healthy ? 'healthy' : 'failing')}; last sync ${
          view.discovery.lastSync === null ? 'never' : time(view.discovery.lastSync)
        }${view.discovery.lastError === null ? '' : `; last error: ${escapeHtml(view.discovery.lastError.message)}`}</p>`;
  const rows = view.targets.map((t) => [
    escapeHtml(t.target),
    `<code>${escapeHtml(t.url)}</code>`,
    badge(t.up ? 'up' : 'down'),
    `${t.lastScrape === null ? 'never' : time(t.lastScrape)}${
      t.lastDurationSeconds === null
        ? ''
        : ` <small>(${escapeHtml(formatNumberWithUnit(t.lastDurationSeconds, 's'))})</small>`
    }`,
    String(t.samples ?? ''),
    String(t.consecutiveFailures),
    t.lastError === null
      ? ''
      : `<code>${escapeHtml(t.lastError.code)}</code> ${escapeHtml(t.lastError.message)} <small>at ${time(t.lastError.at)}</small>`,
  ]);
  return `<section class="targets" id="targets" aria-labelledby="targets-title">
<h2 id="targets-title">Targets</h2>
${discovery}
${
  rows.length === 0
    ? '<p class="quiet">No targets.</p>'
    : table(['target', 'URL', 'health', 'last scrape', 'samples', 'failures in a row', 'last error'], rows)
}
</section>`;
}

export function renderErrors(report: Report): string {
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
