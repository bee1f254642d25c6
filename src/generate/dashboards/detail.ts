/**
 * The detail dashboard: for a chosen queue, every signal the diagnoses use, one panel each, computed exactly
 * as the diagnoses compute it (same windows), with the thresholds the rule conditions compare it with drawn as
 * threshold lines (per queue where the configuration's `queues:` gives queues their own, queue-threshold-lines.ts)
 * and the rules that read it named in the description. Queue latency and work duration are
 * also shown as heatmaps; a few panels put related signals side by side (adds next to API writes), and one
 * splits the depth by priority (normal and low, as Cluster API's dashboards do).
 */

import {
  GraphThresholdsStyleConfigBuilder,
  GraphThresholdsStyleMode,
  LegendDisplayMode,
  LegendPlacement,
  VizLegendOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import {
  type Dashboard,
  type DynamicConfigValue,
  RowBuilder,
  type Threshold,
  ThresholdsConfigBuilder,
  ThresholdsMode,
} from '@grafana/grafana-foundation-sdk/dashboard';
import {
  CellValuesBuilder,
  HeatmapColorMode,
  HeatmapColorOptionsBuilder,
  HeatmapColorScale,
  PanelBuilder as HeatmapPanelBuilder,
  YAxisConfigBuilder,
} from '@grafana/grafana-foundation-sdk/heatmap';
import { PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import type { RuleOverrides } from '../../diagnosis/catalog.js';
import type { Severity } from '../../diagnosis/rule.js';
import {
  byPriority,
  NOT_LOW_PRIORITY,
  perQueue,
  SIGNAL_WINDOW_MS,
  SIGNALS,
  type SignalDefinition,
  type SignalId,
  signal,
  unknownPrioritySeries,
} from '../../diagnosis/signals.js';
import type { Unit } from '../../diagnosis/units.js';
import { LABEL, SUFFIX, WORKQUEUE } from '../../metrics/names.js';
import { aggregateBy, binary, type Expr, rangeFn, selector } from '../../promql/expr.js';
import { formatDuration, renderPromQL } from '../../promql/render.js';
import { type RuleAnalysis, type SignalUse, type ThresholdLine, usesOfSignal } from '../condition-analysis.js';
import { type QueryScope, scopedIdentityLabels } from '../query-scope.js';
import {
  COMPUTE_EVERY_SIGNAL,
  DATASOURCE,
  dashboardBuilder,
  dashboardQuery,
  GridCursor,
  grafanaUnit,
  legendFor,
  PanelIds,
  prometheusQuery,
  queueVariables,
  RATE_INTERVAL,
  type RecordedSeries,
  recordedSeriesNote,
  recordingsNote,
  SEVERITY_COLOR,
  signalQuery,
} from './common.js';
import {
  describePerQueueLine,
  formatLineValue,
  perQueueLineTitle,
  queuePresence,
  type RuleLinesOnSignal,
  ruleLinesOnSignal,
} from './queue-threshold-lines.js';

const PANEL_WIDTH = 8;
const PANEL_HEIGHT = 8;

/**
 * A panel beside the one-signal panels: several signals together, a histogram as a heatmap, or one quantity
 * of the queue split into parts (one query each) with the signals that read the parts named.
 */
type ExtraPanel =
  | { readonly kind: 'together'; readonly title: string; readonly signals: readonly SignalId[]; readonly intro: string }
  | { readonly kind: 'heatmap'; readonly title: string; readonly histogram: string }
  | {
      readonly kind: 'split';
      readonly title: string;
      readonly unit: Unit;
      readonly intro: string;
      /** Per-queue expressions, each drawn with its legend in front of the queue's. */
      readonly parts: ReadonlyArray<{ readonly legend: string; readonly expr: Expr }>;
      /** The signals over the same parts, whose rules the description names. */
      readonly related: readonly SignalId[];
    };

/**
 * The depth at priority 0 or above: real changes in controller-runtime's priority queue, the whole depth of a
 * classic or component-base queue.
 */
const NORMAL_PRIORITY_DEPTH: Expr = byPriority(perQueue(selector(WORKQUEUE.depth, [NOT_LOW_PRIORITY])));
/** The whole depth of a queue whose depth per priority is lost (see `unknownPrioritySeries`). */
const UNKNOWN_PRIORITY_DEPTH: Expr = binary('and', perQueue(selector(WORKQUEUE.depth)), unknownPrioritySeries);

/** The depth split the way Cluster API's dashboards split it: normal priority and low priority. */
const DEPTH_BY_PRIORITY: ExtraPanel = {
  kind: 'split',
  title: 'Depth by priority',
  unit: 'items',
  intro: [
    "Depth split by the priority of the waiting keys. **normal**: keys at priority 0 or above, the real changes of controller-runtime's priority queue, and the whole depth of a classic (controller-runtime) or component-base queue. **low priority**: keys at a negative priority, the initial-list and resync events a priority queue adds at -100 (`handler.LowPriority`) and hands out only when no key of higher priority is ready; absent for a queue without priorities.",
    '',
    'A low-priority backlog at startup is normal: the initial list queues every object at once, the workers serve real changes first and drain the list with the time they have left, so the low-priority line falls while the normal line stays near zero.',
    '',
    "It is a problem when the low-priority line stops falling (real changes take every worker, so the initial list and resyncs wait indefinitely) or when the normal line grows (the queue falls behind on real changes too: the queue's own backlog).",
  ].join('\n'),
  parts: [
    { legend: 'normal', expr: NORMAL_PRIORITY_DEPTH },
    { legend: 'low priority', expr: signal('lowPriorityDepth').expr },
    { legend: 'priority unknown', expr: UNKNOWN_PRIORITY_DEPTH },
  ],
  related: ['lowPriorityDepth', 'lowPriorityDepthSlope', 'normalPriorityDepthFloor', 'unknownPriorityDepthSeries'],
};

/** Sections of the dashboard; every signal not named here lands in a last section. */
const SECTIONS: ReadonlyArray<{ title: string; signals: readonly SignalId[]; extras: readonly ExtraPanel[] }> = [
  {
    title: 'Arrivals, depth and throughput',
    signals: [
      'depth',
      'depthAvg',
      'depthSlope',
      'lowPriorityDepth',
      'lowPriorityDepthSlope',
      'normalPriorityDepthFloor',
      'unknownPriorityDepthSeries',
      'addRate',
      'completionRate',
      'retryRate',
      'sustainedRetryRate',
    ],
    extras: [
      {
        kind: 'together',
        title: 'Add rate and API writes',
        signals: ['addRate', 'writeRate', 'failedRequestRate'],
        intro:
          'Adds to the queue next to the API writes of the whole process: writes that track the adds one for one are the signature of a status write that wakes the controller again.',
      },
      DEPTH_BY_PRIORITY,
    ],
  },
  {
    title: 'Queue latency and work duration',
    signals: [
      'queueLatencyP50',
      'queueLatencyP90',
      'queueLatencyP99',
      'queueLatencyMean',
      'workDurationP50',
      'workDurationP90',
      'workDurationP99',
      'workDurationMean',
      'slowSyncShare',
    ],
    extras: [
      { kind: 'heatmap', title: 'Queue latency heatmap', histogram: WORKQUEUE.queueDuration },
      { kind: 'heatmap', title: 'Work duration heatmap', histogram: WORKQUEUE.workDuration },
    ],
  },
  {
    title: 'Workers and running syncs',
    signals: [
      'busyWorkers',
      'maxWorkers',
      'activeWorkers',
      'unfinishedWork',
      'unfinishedWorkGrowth',
      'longestRunning',
      'longestRunningMax',
      'longestRunningGrowth',
    ],
    extras: [
      {
        kind: 'together',
        title: 'Busy and configured workers',
        signals: ['busyWorkers', 'activeWorkers', 'maxWorkers'],
        intro: "Busy workers (Little's law over finished syncs) and active workers next to the configured maximum.",
      },
    ],
  },
  {
    title: 'Reconcile results and errors',
    signals: [
      'reconcileRate',
      'reconcileSuccessRate',
      'reconcileRequeueRate',
      'reconcileRequeueAfterRate',
      'reconcileErrorRate',
      'sustainedErrorRate',
    ],
    extras: [
      {
        kind: 'together',
        title: 'Reconcile results',
        signals: ['reconcileSuccessRate', 'reconcileRequeueRate', 'reconcileRequeueAfterRate', 'reconcileErrorRate'],
        intro: 'Reconciles per second by result (controller-runtime): errors next to successes and polling requeues.',
      },
    ],
  },
  {
    title: 'Process',
    signals: ['writeRate', 'failedRequestRate', 'leaderStatus'],
    extras: [],
  },
];

/** The sections with every signal placed: signals no section names go into a last one. */
export function detailSections(): Array<{ title: string; signals: SignalDefinition[]; extras: readonly ExtraPanel[] }> {
  const named = new Set<string>(SECTIONS.flatMap((s) => s.signals));
  const rest = SIGNALS.filter((s) => !named.has(s.id));
  const sections = SECTIONS.map((s) => ({
    title: s.title,
    signals: s.signals.map((id) => signal(id)),
    extras: s.extras,
  }));
  if (rest.length > 0) sections.push({ title: 'Other signals', signals: [...rest], extras: [] });
  return sections;
}

/** Threshold steps for a panel: an invisible base, then one step per distinct value, coloured by severity. */
export function thresholdSteps(lines: readonly ThresholdLine[]): Threshold[] {
  const byValue = new Map<number, Severity>();
  for (const line of lines) {
    const seen = byValue.get(line.value);
    byValue.set(line.value, seen === 'critical' || line.severity === 'critical' ? 'critical' : 'warning');
  }
  const steps: Threshold[] = [{ value: null, color: 'transparent' }];
  for (const value of [...byValue.keys()].sort((a, b) => a - b)) {
    steps.push({ value, color: SEVERITY_COLOR[byValue.get(value) ?? 'warning'] });
  }
  return steps;
}

/** How to read a signal's panel: what it is, then each rule that reads it, with its clauses and lines. */
function signalDescription(s: SignalDefinition, uses: readonly DrawnUse[], analyses: readonly RuleAnalysis[]): string {
  const parts = [s.description];
  if (uses.length > 0) {
    parts.push('', 'Used by the diagnoses:');
    for (const { use, lines } of uses) {
      const rule = use.analysis.settings.rule;
      const color = SEVERITY_COLOR[rule.severity];
      const lineNote =
        lines.fixed.length === 0
          ? ''
          : ` Dashed ${color} line${lines.fixed.length > 1 ? 's' : ''} at ${lines.fixed.map((l) => formatLineValue(l)).join(', ')}.`;
      const perQueueNote =
        lines.perQueue.length === 0
          ? ''
          : ` Dashed ${color} series per queue (\`queues:\` of the configuration): ${lines.perQueue.map((l) => describePerQueueLine(l)).join('. ')}.`;
      parts.push(
        `- **${rule.id}** (${rule.severity}, for ${formatDuration(use.analysis.settings.forMs)}): ${use.clauses.map((c) => c.text).join('; ')}.${lineNote}${perQueueNote}`,
      );
    }
  }
  const evidenceOf = analyses.filter((a) => (a.settings.rule.evidence as readonly string[]).includes(s.id));
  if (evidenceOf.length > 0) {
    parts.push('', `Reported as evidence by ${evidenceOf.map((a) => a.settings.rule.id).join(', ')}.`);
  }
  return parts.join('\n');
}

/** A rule reading a signal, with the lines it draws on the signal's panel. */
type DrawnUse = { readonly use: SignalUse; readonly lines: RuleLinesOnSignal };

/** How a per-queue line's series look: dashed, in the colour of the rule's severity. */
function perQueueLineStyle(severity: Severity): DynamicConfigValue[] {
  return [
    { id: 'color', value: { mode: 'fixed', fixedColor: SEVERITY_COLOR[severity] } },
    { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
  ];
}

export function detailDashboard(
  analyses: readonly RuleAnalysis[],
  scope: QueryScope = {},
  recorded: RecordedSeries = COMPUTE_EVERY_SIGNAL,
  overrides: RuleOverrides = {},
): Dashboard {
  const queueLabels = scopedIdentityLabels('queue', scope);
  const presence = queuePresence(scope, recorded);
  const ids = new PanelIds();
  const grid = new GridCursor();
  const builder = dashboardBuilder({
    key: 'detail',
    description: `One work queue in depth: every signal the diagnoses read, with the thresholds of the rules that compare it.${recordingsNote(recorded)}`,
    timeFrom: 'now-1h',
    links: ['overview', 'diagnoses'],
  });
  for (const variable of queueVariables(WORKQUEUE.adds, false, scope)) builder.withVariable(variable);

  const legend = () =>
    new VizLegendOptionsBuilder()
      .showLegend(true)
      .displayMode(LegendDisplayMode.List)
      .placement(LegendPlacement.Bottom)
      .calcs([]);

  const signalPanel = (s: SignalDefinition): TimeseriesPanelBuilder => {
    const uses = usesOfSignal(s.id, analyses).map((use) => ({
      use,
      lines: ruleLinesOnSignal(use, overrides, presence),
    }));
    const lines = uses.flatMap((u) => u.lines.fixed);
    let panel = new TimeseriesPanelBuilder()
      .id(ids.next())
      .title(s.title)
      .description(signalDescription(s, uses, analyses) + recordedSeriesNote(s, recorded))
      .datasource(DATASOURCE)
      .unit(grafanaUnit(s.unit))
      .gridPos(grid.panel(PANEL_WIDTH, PANEL_HEIGHT))
      .legend(legend())
      .thresholds(new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(thresholdSteps(lines)))
      .thresholdsStyle(
        new GraphThresholdsStyleConfigBuilder().mode(
          lines.length === 0 ? GraphThresholdsStyleMode.Off : GraphThresholdsStyleMode.Dashed,
        ),
      )
      .withTarget(prometheusQuery(signalQuery(s, scope, recorded), legendFor(s.scope), 'A'));
    const perQueue = uses.flatMap((u) => u.lines.perQueue);
    let refIndex = 1;
    for (const { line, expr } of perQueue) {
      if (expr === undefined) continue;
      const refId = String.fromCharCode(65 + refIndex);
      refIndex += 1;
      panel = panel
        .withTarget(prometheusQuery(renderPromQL(expr), `${perQueueLineTitle(line)} ${legendFor('queue')}`, refId))
        .overrideByQuery(refId, perQueueLineStyle(line.severity));
    }
    return panel;
  };

  const togetherPanel = (extra: Extract<ExtraPanel, { kind: 'together' }>): TimeseriesPanelBuilder => {
    const members = extra.signals.map((id) => signal(id));
    const relations = new Map<string, string>();
    for (const s of members) {
      for (const use of usesOfSignal(s.id, analyses)) {
        for (const clause of use.clauses) {
          // Clauses that relate two of the panel's signals are what this panel is for.
          if (members.filter((m) => clause.signals.has(m.id)).length >= 2) {
            relations.set(clause.text, `- **${use.analysis.settings.rule.id}**: ${clause.text}`);
          }
        }
      }
    }
    const description = [
      extra.intro,
      '',
      ...members.map((s) => `- **${s.title}**: ${s.description}`),
      ...(relations.size > 0 ? ['', 'The diagnoses relate them:', ...relations.values()] : []),
    ].join('\n');
    let panel = new TimeseriesPanelBuilder()
      .id(ids.next())
      .title(extra.title)
      .description(description)
      .datasource(DATASOURCE)
      .unit(grafanaUnit(members[0]?.unit ?? '1/s'))
      .gridPos(grid.panel(PANEL_WIDTH, PANEL_HEIGHT))
      .legend(legend());
    members.forEach((s, index) => {
      panel = panel.withTarget(
        prometheusQuery(
          signalQuery(s, scope, recorded),
          `${s.title} ${legendFor(s.scope)}`,
          String.fromCharCode(65 + index),
        ),
      );
    });
    return panel;
  };

  const splitPanel = (extra: Extract<ExtraPanel, { kind: 'split' }>): TimeseriesPanelBuilder => {
    const related = extra.related.map((id) => signal(id));
    const rules = [
      ...new Set(related.flatMap((s) => usesOfSignal(s.id, analyses).map((u) => u.analysis.settings.rule.id))),
    ];
    const signals = related.map((s) => `**${s.title}**`).join(', ');
    const readers =
      rules.length === 0
        ? 'The signals over them are'
        : `${rules.map((id) => `**${id}**`).join(', ')} read${rules.length > 1 ? '' : 's'} them through the signals`;
    const description = [extra.intro, '', `${readers} ${signals}, each in its own panel of this section.`].join('\n');
    let panel = new TimeseriesPanelBuilder()
      .id(ids.next())
      .title(extra.title)
      .description(description)
      .datasource(DATASOURCE)
      .unit(grafanaUnit(extra.unit))
      .gridPos(grid.panel(PANEL_WIDTH, PANEL_HEIGHT))
      .legend(legend());
    extra.parts.forEach((part, index) => {
      panel = panel.withTarget(
        prometheusQuery(
          dashboardQuery(part.expr, queueLabels, scope),
          `${part.legend} ${legendFor('queue')}`,
          String.fromCharCode(65 + index),
        ),
      );
    });
    return panel;
  };

  const heatmapPanel = (extra: Extract<ExtraPanel, { kind: 'heatmap' }>): HeatmapPanelBuilder => {
    const expr = aggregateBy('sum', [LABEL.le], rangeFn('increase', extra.histogram + SUFFIX.bucket, SIGNAL_WINDOW_MS));
    const quantiles = SIGNALS.filter((s) => s.quantileOf === extra.histogram).map((s) => s.title);
    return new HeatmapPanelBuilder()
      .id(ids.next())
      .title(extra.title)
      .description(
        `How many observations of ${extra.histogram} fell into each bucket per interval, for the selected queue. ` +
          `The diagnoses read its quantiles (${quantiles.join(', ')}), which are interpolated within these buckets: ` +
          'with decade buckets a quantile is only as sharp as the bucket it falls in.',
      )
      .datasource(DATASOURCE)
      .gridPos(grid.panel(12, PANEL_HEIGHT))
      .withTarget(
        prometheusQuery(dashboardQuery(expr, queueLabels, scope, RATE_INTERVAL), `{{${LABEL.le}}}`, 'A').format(
          PromQueryFormat.Heatmap,
        ),
      )
      .calculate(false)
      .yAxis(new YAxisConfigBuilder().unit('s'))
      .cellValues(new CellValuesBuilder().unit('short'))
      .color(
        new HeatmapColorOptionsBuilder()
          .mode(HeatmapColorMode.Scheme)
          .scheme('Oranges')
          .scale(HeatmapColorScale.Exponential)
          .exponent(0.5)
          .fill('dark-orange')
          .steps(64)
          .reverse(false),
      );
  };

  for (const section of detailSections()) {
    builder.withRow(new RowBuilder(section.title).id(ids.next()).gridPos(grid.row()).datasource(DATASOURCE));
    for (const extra of section.extras) {
      if (extra.kind === 'heatmap') builder.withPanel(heatmapPanel(extra));
      else if (extra.kind === 'split') builder.withPanel(splitPanel(extra));
      else builder.withPanel(togetherPanel(extra));
    }
    for (const s of section.signals) builder.withPanel(signalPanel(s));
  }
  return builder.build();
}
