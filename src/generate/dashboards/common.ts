/**
 * What the three dashboards share: their frame (title, uid, refresh, links), the datasource, the queue
 * variables and the selectors they add to every query (built once here, rendered into each definition's
 * PromQL by `renderPromQL`), panel ids, grid positions, units, and small presets.
 */

import type { DataSourceRef } from '@grafana/grafana-foundation-sdk/common';
import {
  DashboardBuilder,
  DashboardLinkBuilder,
  DashboardLinkType,
  DatasourceVariableBuilder,
  type GridPos,
  QueryVariableBuilder,
  VariableRefresh,
  VariableSort,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder, PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import type { Severity } from '../../diagnosis/rule.js';
import type { SignalDefinition, SignalScope } from '../../diagnosis/signals.js';
import type { Unit } from '../../diagnosis/units.js';
import { LABEL } from '../../metrics/names.js';
import { type Expr, type LabelMatcher, selector } from '../../promql/expr.js';
import { narrowed } from '../../promql/narrowed.js';
import { renderPromQL } from '../../promql/render.js';
import { DASHBOARD_TAG, DASHBOARD_UID, type DashboardKey, OUTPUT } from '../defaults.js';
import { placementLabelInfo, type QueryScope, scopedIdentityLabels } from '../query-scope.js';

export const DATASOURCE_VARIABLE = 'datasource';
/** Every panel and every query reads from the dashboard's datasource variable. */
export const DATASOURCE: DataSourceRef = { type: 'prometheus', uid: grafanaVariable(DATASOURCE_VARIABLE) };

/** The window Grafana substitutes for rates and increases in panels that do not show a signal as defined. */
export const RATE_INTERVAL = '$__rate_interval';

/** Colour of a severity: threshold lines, status cells, finding rows. */
export const SEVERITY_COLOR: Readonly<Record<Severity, string>> = { warning: 'orange', critical: 'red' };

/** The "All" value of the queue variables: `.*` also matches an absent label (component-base has no `controller`). */
export const ALL_VALUE = '.*';

/** `label=~"$label"` for each label: the dashboard variable of the same name. */
export function variableMatchers(labels: readonly string[]): LabelMatcher[] {
  return labels.map((label) => ({ label, op: '=~', value: `$${label}` }));
}

/**
 * The dashboard's selection: the fleet selector of the query scope, then each label's variable. The
 * placement labels among `labels` are placed by `scopedIdentityLabels`.
 */
export function selectionMatchers(labels: readonly string[], scope: QueryScope): LabelMatcher[] {
  return [...(scope.selector ?? []), ...variableMatchers(labels)];
}

/** A definition's PromQL narrowed to the dashboard's selection. */
export function dashboardQuery(
  expr: Expr,
  labels: readonly string[],
  scope: QueryScope,
  windowOverride?: string,
): string {
  return renderPromQL(expr, {
    extraMatchers: selectionMatchers(labels, scope),
    ...(windowOverride === undefined ? {} : { windowOverride }),
  });
}

/**
 * The series the recording rules record each signal to (`recordingPlan(...).seriesOf`, from the same
 * definitions and configuration as the alert rules). A dashboard reads a recorded signal from its series and
 * computes the others itself; `COMPUTE_EVERY_SIGNAL` computes them all, for a Prometheus without the rules.
 */
export type RecordedSeries = (signalId: string) => string | undefined;
export const COMPUTE_EVERY_SIGNAL: RecordedSeries = () => undefined;

/**
 * A signal as a dashboard reads it, narrowed to the selection of `labels`' variables: its recorded series (the
 * recording rule has applied the fleet selector already) or its expression with the selection's matchers.
 */
export function signalSelection(
  s: SignalDefinition,
  labels: readonly string[],
  scope: QueryScope,
  recorded: RecordedSeries,
): Expr {
  const series = recorded(s.id);
  return series === undefined
    ? narrowed(s.expr, selectionMatchers(labels, scope))
    : selector(series, variableMatchers(labels));
}

/** What a dashboard's description says of the recorded series it reads, if any. */
export function recordingsNote(recorded: RecordedSeries): string {
  return recorded === COMPUTE_EVERY_SIGNAL
    ? ''
    : ` Signals are read from the series the rules in ${OUTPUT.alertRules} record: load them in the Prometheus behind the datasource (or generate with \`dashboardsReadRecordings: false\`).`;
}

/** Where a signal panel's data comes from, for its description: the recorded series, if any. */
export function recordedSeriesNote(s: SignalDefinition, recorded: RecordedSeries): string {
  const series = recorded(s.id);
  return series === undefined ? '' : `\n\nRecorded as \`${series}\`.`;
}

/** A signal's PromQL narrowed to the variables of its own scope's labels. */
export function signalQuery(s: SignalDefinition, scope: QueryScope, recorded: RecordedSeries): string {
  return renderPromQL(signalSelection(s, scopedIdentityLabels(s.scope, scope), scope, recorded));
}

export function prometheusQuery(expr: string, legend: string, refId: string): DataqueryBuilder {
  return new DataqueryBuilder().expr(expr).legendFormat(legend).refId(refId).datasource(DATASOURCE);
}

export function instantTableQuery(expr: string, refId: string): DataqueryBuilder {
  return new DataqueryBuilder()
    .expr(expr)
    .refId(refId)
    .datasource(DATASOURCE)
    .instant()
    .format(PromQueryFormat.Table)
    .legendFormat('__auto');
}

/** Legends that name the series of each scope. */
export function legendFor(scope: SignalScope): string {
  switch (scope) {
    case 'queue':
      return `{{${LABEL.name}}} ({{${LABEL.instance}}})`;
    case 'controller':
      return `{{${LABEL.controller}}} ({{${LABEL.instance}}})`;
    case 'process':
      return `{{${LABEL.job}}}/{{${LABEL.instance}}}`;
  }
}

/** Grafana units for the signal units. */
export function grafanaUnit(unit: Unit): string {
  switch (unit) {
    case 's':
      return 's';
    case '1/s':
      return 'suffix:/s';
    case 'items':
    case 'workers':
      return 'short';
    case 'ratio':
      return 'percentunit';
  }
}

// ---- variables ----

export function datasourceVariable(): DatasourceVariableBuilder {
  return new DatasourceVariableBuilder(DATASOURCE_VARIABLE).label('Data source').type('prometheus');
}

/**
 * A variable over the values of `label` on `metric`, narrowed by the variables before it. With `includeAll`
 * its All value is `.*`, which matches series without the label as well.
 */
export function labelVariable(options: {
  readonly label: string;
  readonly title: string;
  readonly metric: string;
  readonly narrowedBy: readonly string[];
  readonly multi: boolean;
  readonly includeAll: boolean;
  readonly description: string;
  /** Matchers in front of the variables', e.g. the fleet selector. */
  readonly matchers?: readonly LabelMatcher[];
}): QueryVariableBuilder {
  const matchers = [...(options.matchers ?? []), ...variableMatchers(options.narrowedBy)];
  const query = `label_values(${renderPromQL(selector(options.metric, matchers))}, ${options.label})`;
  let builder = new QueryVariableBuilder(options.label)
    .label(options.title)
    .description(options.description)
    .datasource(DATASOURCE)
    .query({ query, refId: 'PrometheusVariableQueryEditor-VariableQuery', qryType: 1 })
    .definition(query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc)
    .multi(options.multi)
    .includeAll(options.includeAll)
    // A link may carry a value the current options lack, e.g. an empty controller for a component-base queue.
    .allowCustomValue(true);
  if (options.includeAll) builder = builder.allValue(ALL_VALUE);
  return builder;
}

/**
 * The queue variables over a work-queue metric: the cluster and namespace (when the query scope names their
 * labels), job, instance, controller and name, each narrowed by the ones before it and by the fleet selector.
 */
export function queueVariables(metric: string, nameIsMulti: boolean, scope: QueryScope): QueryVariableBuilder[] {
  const titles: Record<string, string> = {
    [LABEL.job]: 'Job',
    [LABEL.instance]: 'Instance',
    [LABEL.controller]: 'Controller',
    [LABEL.name]: 'Queue',
  };
  const descriptions: Record<string, string> = {
    [LABEL.job]: 'The scrape job of the controllers.',
    [LABEL.instance]: 'The scraped process (pod).',
    [LABEL.controller]:
      'The controller-runtime controller. Queues from component-base (kube-controller-manager) have no controller label; All matches them too.',
    [LABEL.name]: 'The work queue name.',
  };
  const labels = scopedIdentityLabels('queue', scope);
  return labels.map((label, index) => {
    const isName = label === LABEL.name;
    const placement = placementLabelInfo(label, scope);
    return labelVariable({
      label,
      title: placement?.title ?? titles[label] ?? label,
      metric,
      narrowedBy: labels.slice(0, index),
      multi: isName ? nameIsMulti : true,
      includeAll: isName ? nameIsMulti : true,
      description: placement?.description ?? descriptions[label] ?? label,
      matchers: scope.selector ?? [],
    });
  });
}

// ---- links ----

/** Dashboard titles; the links between the dashboards show them. */
const DASHBOARD_TITLE: Readonly<Record<DashboardKey, string>> = {
  overview: 'Workqueue overview',
  detail: 'Workqueue detail',
  diagnoses: 'Workqueue diagnoses',
};

/** A link to another generated dashboard, keeping the time range and the variables. */
export function dashboardLink(key: DashboardKey): DashboardLinkBuilder {
  const title = DASHBOARD_TITLE[key];
  return new DashboardLinkBuilder(title)
    .type(DashboardLinkType.Link)
    .url(`/d/${DASHBOARD_UID[key]}`)
    .icon('dashboard')
    .tooltip(title)
    .includeVars(true)
    .keepTime(true)
    .targetBlank(false)
    .asDropdown(false)
    .tags([]);
}

/**
 * What every generated dashboard starts with: its title and uid, the tag, a 30 s refresh over the last
 * `timeFrom` (browser time zone), links to `links` in that order, and the datasource variable.
 */
export function dashboardBuilder(options: {
  readonly key: DashboardKey;
  readonly description: string;
  readonly timeFrom: string;
  readonly links: readonly DashboardKey[];
}): DashboardBuilder {
  let builder = new DashboardBuilder(DASHBOARD_TITLE[options.key])
    .uid(DASHBOARD_UID[options.key])
    .description(options.description)
    .tags([DASHBOARD_TAG])
    .editable()
    .refresh('30s')
    .time({ from: options.timeFrom, to: 'now' })
    .timezone('browser');
  for (const key of options.links) builder = builder.link(dashboardLink(key));
  return builder.withVariable(datasourceVariable());
}

/** Grafana's `${name}` interpolation: variables, formats (`datasource:queryparam`), data link fields. */
export function grafanaVariable(name: string): string {
  return `\${${name}}`;
}

/** The URL of the detail dashboard for the queue of a table row: each label's variable from the row's column. */
export function detailLinkUrl(labels: readonly string[]): string {
  const params = [
    grafanaVariable(`${DATASOURCE_VARIABLE}:queryparam`),
    ...labels.map((label) => `var-${label}=${grafanaVariable(`__data.fields.${label}`)}`),
    grafanaVariable('__url_time_range'),
  ];
  return `/d/${DASHBOARD_UID.detail}?${params.join('&')}`;
}

/** A data link: `url` may use Grafana's data link variables (`${__data.fields.name}`, `${__value.raw}`). */
export function dataLink(title: string, url: string, targetBlank = false): DashboardLinkBuilder {
  return new DashboardLinkBuilder(title).url(url).targetBlank(targetBlank);
}

// ---- ids and layout ----

/** Panel ids, unique within a dashboard, in order of appearance. */
export class PanelIds {
  private last = 0;
  next(): number {
    this.last += 1;
    return this.last;
  }
}

/** Places panels left to right in lines of the 24-column grid; a row header starts a new line. */
export class GridCursor {
  private x = 0;
  private y = 0;
  private lineHeight = 0;

  row(): GridPos {
    this.newLine();
    const pos = { x: 0, y: this.y, w: 24, h: 1 };
    this.y += 1;
    return pos;
  }

  panel(w: number, h: number): GridPos {
    if (this.x + w > 24) this.newLine();
    const pos = { x: this.x, y: this.y, w, h };
    this.x += w;
    this.lineHeight = Math.max(this.lineHeight, h);
    return pos;
  }

  private newLine(): void {
    if (this.x === 0 && this.lineHeight === 0) return;
    this.y += this.lineHeight;
    this.x = 0;
    this.lineHeight = 0;
  }
}
