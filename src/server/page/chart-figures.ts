/**
 * The page's charts: for each finding, the charts that explain it (`finding-charts.ts`) with its thresholds and
 * the times its condition began to hold and fired; for a queue without findings, its depth and throughput. Each
 * chart is a figure spec (what to draw) plus the queue's values; the script draws them with uPlot.
 *
 * Contract:
 * - A queue's figures are numbered in order (`<queue id>.<n>`), the same for one report wherever they are built
 *   (inline in the page, or by the lazy route for a queue opened later).
 * - A series without any value in the window is left out; a chart whose leading (most important) series has none
 *   is left out too, and so is one with no series left.
 * - Markers: `onset` at the finding's `since` (when the condition began to hold: a pending finding's start), and
 *   `fired` at `since` + the rule's `for` in force for a firing finding, at `firesAt` for a pending one.
 * - Values carry four significant digits: what a chart can show, at a fraction of the bytes.
 * - Without the script, a chart's place lists each series' latest, lowest and highest value and its thresholds.
 */
import type { RuleOverrides } from '../../diagnosis/catalog.js';
import { ruleSettingsForQueue } from '../../diagnosis/catalog.js';
import { formatNumberWithUnit } from '../../diagnosis/format.js';
import { type Finding, isFiring, type QueueReport } from '../../diagnosis/report.js';
import type { Severity } from '../../diagnosis/rule.js';
import { SIGNAL_BY_ID } from '../../diagnosis/signals.js';
import type { Unit } from '../../diagnosis/units.js';
import { CHART_BY_ID, OVERVIEW_CHARTS, SERIES_SIGNALS } from '../../service/queue-series.js';
import type { ChartData } from './chart-data.js';
import { explainRule } from './finding-charts.js';
import { escapeHtml } from './html.js';
import type { QueueContext } from './queue-context.js';

/** The charts of a queue without findings. */
export const OVERVIEW_GROUP = 'overview';

export type FigureSpec = {
  /** `<queue id>.<n>`: unique in the page. */
  readonly key: string;
  readonly queue: string;
  /** The finding's rule the chart explains, or `OVERVIEW_GROUP`. */
  readonly group: string;
  readonly title: string;
  readonly unit: Unit;
  readonly signals: readonly { readonly id: string; readonly title: string }[];
  readonly thresholds: readonly { readonly label: string; readonly value: number }[];
  /** The finding's severity (the colour of its thresholds and of the time it fired); none for overview charts. */
  readonly severity?: Severity;
  /** Times in unix seconds. */
  readonly markers: readonly { readonly t: number; readonly kind: 'onset' | 'fired'; readonly label: string }[];
};

/** What the script draws: the time axis (unix seconds), the figures, each figure's queue's values by signal. */
export type ChartPayload = {
  readonly times: readonly number[];
  readonly figures: readonly FigureSpec[];
  readonly values: Readonly<Record<string, Readonly<Record<string, readonly (number | null)[]>>>>;
};

/** The figures of a queue, in the order of its findings (each finding's charts), or its overview charts. */
export function queueFigures(context: QueueContext, data: ChartData): FigureSpec[] {
  const { queue } = context;
  const hasData = (signal: string): boolean => data.values(queue.id, signal)?.some((v) => v !== null) === true;
  const drafts: Omit<FigureSpec, 'key'>[] = [];
  for (const finding of queue.findings) {
    const settings = context.settings(finding.rule);
    if (settings === undefined) continue;
    for (const chart of explainRule(settings).charts) {
      if (!hasData(chart.signals[0] ?? '')) continue;
      const signals = chart.signals.filter(hasData);
      drafts.push({
        queue: queue.id,
        group: finding.rule,
        title: chartTitle(signals),
        unit: chart.unit,
        signals: signals.map((id) => ({ id, title: signalTitle(id) })),
        thresholds: chart.thresholds.map((t) => ({ label: t.label, value: t.value })),
        severity: finding.severity,
        markers: markers(finding, settings.forMs),
      });
    }
  }
  if (queue.findings.length === 0 && queue.status !== 'standby') {
    for (const id of OVERVIEW_CHARTS) {
      const chart = CHART_BY_ID.get(id);
      if (chart === undefined || !chart.signals.some(hasData)) continue;
      const signals = chart.signals.filter(hasData);
      drafts.push({
        queue: queue.id,
        group: OVERVIEW_GROUP,
        title: chart.title,
        unit: chart.unit,
        signals: signals.map((s) => ({ id: s, title: signalTitle(s) })),
        thresholds: [],
        markers: [],
      });
    }
  }
  return drafts.map((draft, n) => ({ key: `${queue.id}.${n}`, ...draft }));
}

/** The payload of `figures` (of any queues): the time axis and the values they draw. */
export function chartPayload(figures: readonly FigureSpec[], data: ChartData): ChartPayload {
  const values: Record<string, Record<string, (number | null)[]>> = {};
  for (const figure of figures) {
    const queue = values[figure.queue] ?? {};
    values[figure.queue] = queue;
    for (const { id } of figure.signals) {
      queue[id] ??= (data.values(figure.queue, id) ?? []).map((v) => (v === null ? null : Number(v.toPrecision(4))));
    }
  }
  return { times: data.timesMs.map((t) => t / 1000), figures, values };
}

/** The signals beyond the chart signals the charts of `queues`' findings draw (to compute before rendering). */
export function signalsToExplain(queues: readonly QueueReport[], overrides: RuleOverrides = {}): string[] {
  const out = new Set<string>();
  for (const queue of queues) {
    if (queue.findings.length === 0) continue;
    const { settings } = ruleSettingsForQueue(overrides, queue.queue);
    for (const finding of queue.findings) {
      const inForce = settings.find((s) => s.rule.id === finding.rule);
      if (inForce === undefined) continue;
      for (const signal of explainRule(inForce).chartedSignals) out.add(signal);
    }
  }
  for (const signal of SERIES_SIGNALS) out.delete(signal);
  return [...out];
}

/** A figure with what it says without the script. */
export function renderFigure(figure: FigureSpec, data: ChartData): string {
  const lines = figure.signals.map(
    (s) => `<li>${escapeHtml(fallbackLine(s.title, data.values(figure.queue, s.id) ?? [], figure.unit))}</li>`,
  );
  for (const t of figure.thresholds) lines.push(`<li>Threshold: ${escapeHtml(t.label)}</li>`);
  return `<figure class="chart" data-queue="${escapeHtml(figure.queue)}" data-figure="${escapeHtml(figure.key)}">
<figcaption>${escapeHtml(figure.title)} <small>${escapeHtml(UNIT_WORDS[figure.unit])}</small></figcaption>
<div class="plot"><ul>${lines.join('')}</ul></div>
</figure>`;
}

/**
 * The place of a group of figures: drawn now (`figures`), or, for a queue shown closed, an empty place the script
 * fills when the queue is opened.
 */
export function renderChartPlace(
  queueId: string,
  group: string,
  figures: readonly FigureSpec[] | undefined,
  data: ChartData,
): string {
  if (figures === undefined) {
    return `<div class="charts" data-queue="${escapeHtml(queueId)}" data-group="${escapeHtml(group)}" data-lazy><p class="quiet">Charts need JavaScript.</p></div>`;
  }
  const own = figures.filter((f) => f.group === group);
  return own.length === 0 ? '' : `<div class="charts">\n${own.map((f) => renderFigure(f, data)).join('\n')}\n</div>`;
}

/** A unit in words, for axes and captions. */
export const UNIT_WORDS: Readonly<Record<Unit, string>> = {
  items: 'items',
  workers: 'workers',
  s: 'seconds',
  '1/s': 'per second',
  ratio: 'percent',
};

function signalTitle(id: string): string {
  return SIGNAL_BY_ID.get(id)?.title ?? id;
}

/** `A`, `A and B`, `A, B and C`, `A, B and 3 more`. */
function chartTitle(signals: readonly string[]): string {
  const titles = signals.map(signalTitle);
  if (titles.length <= 1) return titles[0] ?? '';
  if (titles.length === 2) return `${titles[0]} and ${titles[1]}`;
  if (titles.length === 3) return `${titles[0]}, ${titles[1]} and ${titles[2]}`;
  return `${titles[0]}, ${titles[1]} and ${titles.length - 2} more`;
}

function markers(finding: Finding, forMs: number): FigureSpec['markers'] {
  if (finding.since === null || finding.since === undefined) return [];
  const sinceMs = Date.parse(finding.since);
  if (!Number.isFinite(sinceMs)) return [];
  const firedMs = isFiring(finding)
    ? sinceMs + forMs
    : finding.firesAt === undefined
      ? Number.NaN
      : Date.parse(finding.firesAt);
  const out: { t: number; kind: 'onset' | 'fired'; label: string }[] = [
    { t: sinceMs / 1000, kind: 'onset', label: 'holds' },
  ];
  if (Number.isFinite(firedMs))
    out.push({ t: firedMs / 1000, kind: 'fired', label: isFiring(finding) ? 'fired' : 'fires' });
  return out;
}

/** What a chart's place says of one series without the script: its latest, lowest and highest value. */
function fallbackLine(title: string, values: readonly (number | null)[], unit: Unit): string {
  const present = values.filter((v): v is number => v !== null);
  if (present.length === 0) return `${title}: no data`;
  const fmt = (n: number): string => formatNumberWithUnit(n, unit);
  const latest = present[present.length - 1] as number;
  return `${title}: latest ${fmt(latest)}, lowest ${fmt(Math.min(...present))}, highest ${fmt(Math.max(...present))}`;
}
