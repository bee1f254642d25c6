/**
 * The overview dashboard: every queue in one table (status from the generated alerts, then the signals an
 * on-call engineer scans first, then the kind of queue the labels show), each row linking to the detail
 * dashboard for that queue.
 */

import { TableCellDisplayMode, TableSortByFieldStateBuilder } from '@grafana/grafana-foundation-sdk/common';
import {
  type Dashboard,
  type DataTransformerConfig,
  type DynamicConfigValue,
  MappingType,
  RowBuilder,
  type ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as TablePanelBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { joinMatching } from '../../diagnosis/identity.js';
import type { Severity } from '../../diagnosis/rule.js';
import { type SignalDefinition, type SignalId, signal } from '../../diagnosis/signals.js';
import { LABEL, PROMETHEUS_ALERTS, WORKQUEUE } from '../../metrics/names.js';
import { aggregateWithout, anyOf, binary, type Expr, eq, num, regexMatch, selector } from '../../promql/expr.js';
import { narrowed } from '../../promql/narrowed.js';
import { renderPromQL } from '../../promql/render.js';
import type { RuleAnalysis } from '../condition-analysis.js';
import { type QueryScope, scopedIdentityLabels } from '../query-scope.js';
import {
  COMPUTE_EVERY_SIGNAL,
  DATASOURCE,
  dashboardBuilder,
  dashboardQuery,
  dataLink,
  detailLinkUrl,
  GridCursor,
  grafanaUnit,
  instantTableQuery,
  legendFor,
  PanelIds,
  prometheusQuery,
  queueVariables,
  type RecordedSeries,
  recordedSeriesNote,
  recordingsNote,
  SEVERITY_COLOR,
  selectionMatchers,
  signalQuery,
  signalSelection,
} from './common.js';

/** Severities in rising order; the status column shows the highest firing one (0 = none). */
const SEVERITY_RANK: Readonly<Record<Severity, number>> = { warning: 1, critical: 2 };
const STATUS_COLORS: Readonly<Record<Severity | 'ok', string>> = { ok: 'green', ...SEVERITY_COLOR };

/** The table's columns after the status, in order. */
const COLUMNS: readonly SignalId[] = [
  'depth',
  'addRate',
  'retryRate',
  'queueLatencyP99',
  'workDurationP99',
  'longestRunning',
  'busyWorkers',
  'maxWorkers',
];

type Column = {
  readonly title: string;
  readonly promql: string;
  readonly unit: string;
  readonly description: string;
  readonly mappings?: ValueMapping[];
};

/** Values of the queue-kind column. */
const QUEUE_KIND = { priority: 1, classic: 0 } as const;

/**
 * The queue's status: the highest severity among the generated alerts firing for it (Prometheus' `ALERTS`
 * series carry the alert's labels, which are the queue's identity), 0 for a queue with none firing.
 */
function statusExpr(analyses: readonly RuleAnalysis[]): Expr {
  const queueRules = analyses.filter((a) => a.settings.rule.scope === 'queue').map((a) => a.settings.rule);
  const severities = (Object.keys(SEVERITY_RANK) as Severity[]).filter((s) => queueRules.some((r) => r.severity === s));
  const ranked = severities.map((severity) =>
    binary(
      '*',
      selector(PROMETHEUS_ALERTS.series, [
        eq(PROMETHEUS_ALERTS.alertStateLabel, PROMETHEUS_ALERTS.firing),
        eq(LABEL.severity, severity),
        regexMatch(
          PROMETHEUS_ALERTS.alertNameLabel,
          queueRules
            .filter((r) => r.severity === severity)
            .map((r) => r.id)
            .join('|'),
        ),
      ]),
      num(SEVERITY_RANK[severity]),
    ),
  );
  const none = binary('*', signal('depth').expr, num(0));
  const [first, ...rest] = ranked;
  if (first === undefined) return none;
  const highest = aggregateWithout(
    'max',
    [PROMETHEUS_ALERTS.alertNameLabel, PROMETHEUS_ALERTS.alertStateLabel, LABEL.severity],
    anyOf(first, ...rest),
  );
  return binary('or', highest, none);
}

/**
 * Which queue a controller runs, from the labels of its depth: 1 where a depth series carries a priority
 * (controller-runtime's priority queue writes the item priority, `"0"`, `"-100"`, or the cardinality-limit
 * placeholder), 0 for every other queue (controller-runtime's classic queue writes `priority=""`, component-base
 * no priority label). Grouped `without (priority)` like the signal columns, so its rows carry the same labels
 * and merge with theirs.
 */
function queueKindExpr(): Expr {
  const withPriority = selector(WORKQUEUE.depth, [{ label: LABEL.priority, op: '!=', value: '' }]);
  const priority = binary(
    '+',
    binary('*', aggregateWithout('count', [LABEL.priority], withPriority), num(0)),
    num(QUEUE_KIND.priority),
  );
  const classic = binary('*', signal('depth').expr, num(0));
  return binary('or', priority, classic);
}

function queueKindMappings(): ValueMapping[] {
  return [
    {
      type: MappingType.ValueToText,
      options: {
        [String(QUEUE_KIND.priority)]: { text: 'priority', index: 0 },
        [String(QUEUE_KIND.classic)]: { text: 'classic', index: 1 },
      },
    },
  ];
}

/**
 * A signal of any scope as a queue-level series, narrowed to the selection: controller- and process-level
 * values are joined onto each queue, each side narrowed by the labels its series carry.
 */
function perQueueColumn(s: SignalDefinition, scope: QueryScope, recorded: RecordedSeries): string {
  const queueLabels = scopedIdentityLabels('queue', scope);
  if (s.scope === 'queue') {
    const values = signalSelection(s, queueLabels, scope, recorded);
    // The table merges its queries' rows by their labels: a recorded series' name is dropped, as computing drops it.
    return renderPromQL(values.kind === 'selector' ? aggregateWithout('sum', [], values) : values);
  }
  const queues = narrowed(binary('*', signal('depth').expr, num(0)), selectionMatchers(queueLabels, scope));
  const values = signalSelection(s, scopedIdentityLabels(s.scope, scope), scope, recorded);
  return renderPromQL(binary('+', queues, values, joinMatching(s.scope)));
}

function statusMappings(): ValueMapping[] {
  const options: Record<string, { text: string; color: string; index: number }> = {
    '0': { text: 'ok', color: STATUS_COLORS.ok, index: 0 },
  };
  for (const [severity, rank] of Object.entries(SEVERITY_RANK) as Array<[Severity, number]>) {
    options[String(rank)] = { text: severity, color: STATUS_COLORS[severity], index: rank };
  }
  return [{ type: MappingType.ValueToText, options }];
}

/** `Value #A` is how Grafana names the value column of query A in a merged table. */
function valueField(refId: string): string {
  return `Value #${refId}`;
}

function refIdAt(index: number): string {
  return String.fromCharCode('A'.charCodeAt(0) + index);
}

export function overviewDashboard(
  analyses: readonly RuleAnalysis[],
  scope: QueryScope = {},
  recorded: RecordedSeries = COMPUTE_EVERY_SIGNAL,
): Dashboard {
  const queueLabels = scopedIdentityLabels('queue', scope);
  const ids = new PanelIds();
  const grid = new GridCursor();
  const status: Column = {
    title: 'Status',
    promql: dashboardQuery(statusExpr(analyses), queueLabels, scope),
    unit: 'none',
    description:
      'The highest severity among the generated alerts (alerts/workqueue-doctor.rules.yaml) firing for the queue; ok when none fires. Needs the rules loaded in this Prometheus.',
    mappings: statusMappings(),
  };
  const queueKind: Column = {
    title: 'Queue kind',
    promql: dashboardQuery(queueKindExpr(), queueLabels, scope),
    unit: 'none',
    description:
      "**priority** when the queue's depth is exported per priority (controller-runtime's priority queue, its default since v0.23: initial-list and resync events wait at a low priority, see the detail dashboard's Depth by priority), **classic** otherwise (controller-runtime's classic queue, component-base).",
    mappings: queueKindMappings(),
  };
  const columns: Column[] = [
    status,
    ...COLUMNS.map((id) => {
      const s = signal(id);
      return {
        title: s.title,
        promql: perQueueColumn(s, scope, recorded),
        unit: grafanaUnit(s.unit),
        description: s.description + recordedSeriesNote(s, recorded),
      };
    }),
    queueKind,
  ];

  const transformations: DataTransformerConfig[] = [
    { id: 'merge', options: {} },
    {
      id: 'organize',
      options: {
        excludeByName: { Time: true },
        indexByName: Object.fromEntries(
          [...queueLabels, ...columns.map((_, i) => valueField(refIdAt(i)))].map((field, index) => [field, index]),
        ),
        renameByName: {},
      },
    },
  ];

  let table = new TablePanelBuilder()
    .id(ids.next())
    .title('Work queues')
    .description(
      [
        'Every work queue in the selection, one row each. Click a row to open the detail dashboard for that queue.',
        '',
        ...columns.map((c) => `- **${c.title}**: ${c.description}`),
      ].join('\n'),
    )
    .datasource(DATASOURCE)
    .gridPos(grid.panel(24, 14))
    .transformations(transformations)
    .sortBy([new TableSortByFieldStateBuilder().displayName(status.title).desc(true)])
    .dataLinks([dataLink('Queue detail', detailLinkUrl(queueLabels))]);
  columns.forEach((column, index) => {
    const refId = refIdAt(index);
    table = table.withTarget(instantTableQuery(column.promql, refId));
    const properties: DynamicConfigValue[] = [
      { id: 'displayName', value: column.title },
      { id: 'unit', value: column.unit },
    ];
    if (column.mappings !== undefined) properties.push({ id: 'mappings', value: column.mappings });
    if (column === status) {
      properties.push({ id: 'custom.cellOptions', value: { type: TableCellDisplayMode.ColorBackground } });
    }
    table = table.overrideByName(valueField(refId), properties);
  });

  const trend = (id: SignalId): TimeseriesPanelBuilder => {
    const s = signal(id);
    return new TimeseriesPanelBuilder()
      .id(ids.next())
      .title(`${s.title} by queue`)
      .description(s.description + recordedSeriesNote(s, recorded))
      .datasource(DATASOURCE)
      .unit(grafanaUnit(s.unit))
      .gridPos(grid.panel(12, 8))
      .withTarget(prometheusQuery(signalQuery(s, scope, recorded), legendFor(s.scope), 'A'));
  };

  const builder = dashboardBuilder({
    key: 'overview',
    description: `Every Kubernetes controller work queue at a glance, with the status of the generated alerts.${recordingsNote(recorded)}`,
    timeFrom: 'now-1h',
    links: ['diagnoses', 'detail'],
  });
  for (const variable of queueVariables(WORKQUEUE.adds, true, scope)) builder.withVariable(variable);
  builder.withPanel(table);
  builder.withRow(new RowBuilder('Trends').id(ids.next()).gridPos(grid.row()).datasource(DATASOURCE));
  builder.withPanel(trend('depth'));
  builder.withPanel(trend('addRate'));
  return builder.build();
}
