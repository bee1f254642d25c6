/**
 * The diagnoses dashboard: the service's verdicts (`workqueue_doctor_finding`, one series per active
 * finding) over time and now, with links to the runbooks. It shows what `workqueue-doctor serve` found; the
 * generated alert rules, not these series, are the paging path.
 */
import { TableCellDisplayMode, VisibilityMode } from '@grafana/grafana-foundation-sdk/common';
import {
  type Dashboard,
  type DataTransformerConfig,
  MappingType,
  RowBuilder,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { PanelBuilder as StateTimelinePanelBuilder } from '@grafana/grafana-foundation-sdk/statetimeline';
import { PanelBuilder as TablePanelBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { runbookUrl } from '../../diagnosis/runbook.js';
import { DOCTOR, DOCTOR_FINDING_LABELS, LABEL } from '../../metrics/names.js';
import { aggregateBy, binary, type Expr, num, selector } from '../../promql/expr.js';
import { formatDuration } from '../../promql/render.js';
import type { RuleAnalysis } from '../condition-analysis.js';
import type { QueryScope } from '../query-scope.js';
import {
  DATASOURCE,
  dashboardBuilder,
  dashboardQuery,
  dataLink,
  detailLinkUrl,
  GridCursor,
  grafanaVariable,
  instantTableQuery,
  labelVariable,
  PanelIds,
  prometheusQuery,
  SEVERITY_COLOR,
} from './common.js';

/**
 * The service's own series, which the fleet selector (it selects the controllers' targets) does not apply to:
 * the finding labels name the queue.
 */
const SERVICE_SCOPE: QueryScope = {};

/** The finding labels the dashboard's variables select on. */
const SELECTED_LABELS: readonly string[] = [LABEL.target, LABEL.controller, LABEL.name];

/** One series per active finding, with exactly the finding's labels. */
function activeFindings(): Expr {
  return binary('>', aggregateBy('max', DOCTOR_FINDING_LABELS, selector(DOCTOR.finding)), num(0));
}

export function diagnosesDashboard(analyses: readonly RuleAnalysis[], runbookBaseUrl: string): Dashboard {
  const ids = new PanelIds();
  const grid = new GridCursor();
  const findings = dashboardQuery(activeFindings(), SELECTED_LABELS, SERVICE_SCOPE);
  const legend = `{{${LABEL.rule}}} · {{${LABEL.target}}} {{${LABEL.name}}}`;

  const runbookLinks = analyses.map((a) =>
    dataLink(`${a.settings.rule.id}: ${a.settings.rule.title}`, runbookUrl(runbookBaseUrl, a.settings.rule.id), true),
  );
  const ruleList = analyses.map(
    (a) =>
      `- **${a.settings.rule.id}** (${a.settings.rule.severity}, for ${formatDuration(a.settings.forMs)}): ${a.settings.rule.text.meaning}`,
  );

  const timeline = (): StateTimelinePanelBuilder =>
    new StateTimelinePanelBuilder()
      .id(ids.next())
      .title('Findings over time')
      .description(
        [
          `Each line is one finding of the service (${DOCTOR.finding}) for one queue or target: coloured while it is active.`,
          '',
          ...ruleList,
        ].join('\n'),
      )
      .datasource(DATASOURCE)
      .gridPos(grid.panel(24, 10))
      .mappings([{ type: MappingType.ValueToText, options: { '1': { text: 'active', color: 'orange', index: 0 } } }])
      .showValue(VisibilityMode.Never)
      .mergeValues(true)
      .links(runbookLinks)
      .withTarget(prometheusQuery(findings, legend, 'A'));

  const perRule = (): TimeseriesPanelBuilder =>
    new TimeseriesPanelBuilder()
      .id(ids.next())
      .title('Queues with each finding')
      .description('How many queues (or targets) each diagnosis holds for, over time.')
      .datasource(DATASOURCE)
      .unit('short')
      .min(0)
      .gridPos(grid.panel(24, 8))
      .withTarget(
        prometheusQuery(
          dashboardQuery(aggregateBy('count', [LABEL.rule], activeFindings()), SELECTED_LABELS, SERVICE_SCOPE),
          `{{${LABEL.rule}}}`,
          'A',
        ),
      );

  const organize: DataTransformerConfig = {
    id: 'organize',
    options: {
      excludeByName: { Time: true, Value: true },
      indexByName: Object.fromEntries(DOCTOR_FINDING_LABELS.map((label, index) => [label, index])),
      renameByName: {},
    },
  };
  const severityMappings = Object.fromEntries(
    Object.entries(SEVERITY_COLOR).map(([severity, color], index) => [severity, { text: severity, color, index }]),
  );
  const table = (): TablePanelBuilder =>
    new TablePanelBuilder()
      .id(ids.next())
      .title('Active findings')
      .description(
        'The findings active now, one row each. Click a rule for its runbook, a queue name for the detail dashboard; the panel links list every runbook.',
      )
      .datasource(DATASOURCE)
      .gridPos(grid.panel(24, 10))
      .withTarget(instantTableQuery(findings, 'A'))
      .transformations([organize])
      .links(runbookLinks)
      .overrideByName(LABEL.rule, [
        {
          id: 'links',
          value: [dataLink('Runbook', runbookUrl(runbookBaseUrl, grafanaVariable('__value.raw')), true).build()],
        },
      ])
      .overrideByName(LABEL.severity, [
        { id: 'mappings', value: [{ type: MappingType.ValueToText, options: severityMappings }] },
        { id: 'custom.cellOptions', value: { type: TableCellDisplayMode.ColorBackground } },
      ])
      .overrideByName(LABEL.name, [
        { id: 'links', value: [dataLink('Queue detail', detailLinkUrl([LABEL.controller, LABEL.name])).build()] },
      ]);

  const builder = dashboardBuilder({
    key: 'diagnoses',
    description:
      'What workqueue-doctor found, over time and now, with links to the runbooks. Fed by the service (workqueue-doctor serve); the generated alert rules page independently.',
    timeFrom: 'now-6h',
    links: ['overview', 'detail'],
  });
  const titles: Record<string, string> = {
    [LABEL.target]: 'Target',
    [LABEL.controller]: 'Controller',
    [LABEL.name]: 'Queue',
  };
  SELECTED_LABELS.forEach((label, index) => {
    builder.withVariable(
      labelVariable({
        label,
        title: titles[label] ?? label,
        metric: DOCTOR.finding,
        narrowedBy: SELECTED_LABELS.slice(0, index),
        multi: true,
        includeAll: true,
        description: `The ${titles[label]?.toLowerCase() ?? label} of the findings.`,
      }),
    );
  });
  builder.withRow(new RowBuilder('Findings').id(ids.next()).gridPos(grid.row()).datasource(DATASOURCE));
  builder.withPanel(table());
  builder.withPanel(timeline());
  builder.withPanel(perRule());
  return builder.build();
}
