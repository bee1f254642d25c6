/**
 * The fleet list's filters: real form controls (checkboxes, selects, a search field) named as the query string
 * names them (`?status=firing&status=pending&rule=…&controller=…&namespace=…&cluster=…&q=…`), so a link shares
 * a view. The script applies them, keeps them in the URL and reads them back from it; without the script the
 * form stays hidden (the list shows every queue). Each option counts the queues it selects in this report; a
 * select offers only the values some queue has, and none when no queue has any (no namespaces known).
 */
import { RULE_BY_ID } from '../../diagnosis/catalog.js';
import type { RuleId } from '../../diagnosis/rule.js';
import { escapeHtml, plural } from './html.js';
import type { QueueContext } from './queue-context.js';
import { STATUS_GROUPS, STATUS_LOOK, type StatusGroup } from './status.js';

/** The query parameters of the filters: the script reads and writes the same names. */
export const FILTER_PARAMETERS = ['status', 'rule', 'controller', 'namespace', 'cluster', 'q'] as const;

export function renderFilters(contexts: readonly QueueContext[]): string {
  if (contexts.length === 0) return '';
  const groups = new Map<StatusGroup, number>();
  for (const c of contexts) {
    const group = STATUS_LOOK[c.queue.status].group;
    groups.set(group, (groups.get(group) ?? 0) + 1);
  }
  // Standby is offered only when there is one; the others always, so a shared link always finds its box.
  const offered = STATUS_GROUPS.filter((g) => g !== 'standby' || groups.has(g));
  const statuses = offered.map(
    (g) =>
      `<label class="check"><input type="checkbox" name="status" value="${g}"> ${g} <span class="count">${groups.get(g) ?? 0}</span></label>`,
  );
  const rules = countBy(contexts.flatMap((c) => [...new Set(c.queue.findings.map((f) => f.rule))]));
  const ruleTitle = (id: string): string => RULE_BY_ID.get(id as RuleId)?.title ?? id;
  return `<form class="filters" id="filters" role="search" aria-label="Filter the queues" hidden>
<fieldset class="statuses"><legend>Status</legend>${statuses.join('')}</fieldset>
${select('rule', 'Rule', 'any rule', rules, ruleTitle)}
${select('controller', 'Controller', 'any controller', countBy(contexts.map((c) => c.queue.queue.controller)))}
${select('namespace', 'Namespace', 'any namespace', countBy(contexts.map((c) => c.namespace)))}
${select('cluster', 'Cluster', 'any cluster', countBy(contexts.map((c) => c.cluster)))}
<label class="search">Search <input type="search" name="q" autocomplete="off" spellcheck="false" placeholder="queue, controller, summary…"></label>
<button type="reset">Clear filters</button>
<p class="shown" id="shown" aria-live="polite">${plural(contexts.length, 'queue')}</p>
</form>`;
}

function select(
  name: string,
  label: string,
  anyText: string,
  counts: ReadonlyMap<string, number>,
  title: (value: string) => string = (v) => v,
): string {
  if (counts.size === 0) return '';
  const options = [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([value, n]) => `<option value="${escapeHtml(value)}">${escapeHtml(title(value))} (${n})</option>`);
  return `<label class="select">${label} <select name="${name}"><option value="">${anyText}</option>${options.join('')}</select></label>`;
}

function countBy(values: readonly (string | null | undefined)[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const v of values) if (v !== null && v !== undefined && v !== '') out.set(v, (out.get(v) ?? 0) + 1);
  return out;
}
