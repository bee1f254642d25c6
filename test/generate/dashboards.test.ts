/**
 * Lint of the generated dashboards: stable uids, the SDK's schema version, unique panel ids, grid positions
 * that do not overlap, the datasource variable and a description on every panel, threshold lines equal to
 * the rule definitions' values (recomputed here by perturbing each threshold), both label schemas matched
 * by the variables, no rate over a gauge, and the committed files equal to what generation produces.
 */
import { readFileSync } from 'node:fs';
import { defaultDashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { describe, expect, it } from 'vitest';
import { ruleSettings } from '../../src/diagnosis/catalog.js';
import { SIGNALS, signal } from '../../src/diagnosis/signals.js';
import { GENERATED_DIRECTORIES, generateArtifacts } from '../../src/generate/artifacts.js';
import { DASHBOARD_UID, type DashboardKey, OUTPUT } from '../../src/generate/defaults.js';
import { recordedName } from '../../src/generate/recording-rules.js';
import {
  CLIENT_GO,
  CONTROLLER_RUNTIME,
  NEGATIVE_PRIORITY_PATTERN,
  PRIORITY_NUMBER_PATTERN,
  WORKQUEUE,
} from '../../src/metrics/names.js';
import { dashboardExpressions, dashboardsOf, expectedLines, filesByPath, type PanelJson, panelsOf } from './helpers.js';

const files = filesByPath();
const dashboards = dashboardsOf(files);
/** The dashboards for a Prometheus without the rules: every signal computed. */
const computing = dashboardsOf(
  new Map(generateArtifacts({ dashboardsReadRecordings: false }).map((f) => [f.path, f.content])),
);
const KEYS = Object.keys(DASHBOARD_UID) as DashboardKey[];
const severityOf = (id: string) => ruleSettings().find((s) => s.rule.id === id)?.rule.severity;
/** How Grafana spells a reference to the datasource variable. */
const DATASOURCE_REF = ['$', '{datasource}'].join('');
/** The matchers of the queue variables, as every queue-level query carries them. */
const VARIABLES = 'job=~"$job", instance=~"$instance", controller=~"$controller", name=~"$name"';

type TableJson = PanelJson & {
  transformations?: Array<{ id: string; options: { indexByName?: Record<string, number> } }>;
  fieldConfig?: {
    overrides?: Array<{ matcher: { id: string; options: string }; properties: Array<{ id: string; value: unknown }> }>;
  };
};

function overlaps(a: NonNullable<PanelJson['gridPos']>, b: NonNullable<PanelJson['gridPos']>): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

describe('generated dashboards', () => {
  it('have stable uids and the schema version of the SDK', () => {
    for (const key of KEYS) {
      expect(dashboards[key].uid).toBe(DASHBOARD_UID[key]);
      expect(dashboards[key].schemaVersion).toBe(defaultDashboard().schemaVersion);
      // No numeric id: importable through the UI and by file provisioning alike.
      expect(dashboards[key].id ?? null).toBeNull();
    }
    expect(Object.values(DASHBOARD_UID)).toEqual([
      'workqueue-doctor-overview',
      'workqueue-doctor-detail',
      'workqueue-doctor-diagnoses',
    ]);
  });

  it.each(KEYS)('%s: unique panel ids and grid positions inside the grid that do not overlap', (key) => {
    const panels = panelsOf(dashboards[key]);
    expect(panels.length).toBeGreaterThan(1);
    const ids = panels.map((p) => p.id);
    for (const id of ids) expect(typeof id === 'number' && id > 0).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [i, a] of panels.entries()) {
      const pos = a.gridPos;
      expect(pos, `${a.title} has a grid position`).toBeDefined();
      if (pos === undefined) continue;
      expect(pos.x >= 0 && pos.w > 0 && pos.x + pos.w <= 24 && pos.h > 0 && pos.y >= 0).toBe(true);
      for (const b of panels.slice(i + 1)) {
        if (b.gridPos !== undefined) expect(overlaps(pos, b.gridPos), `${a.title} overlaps ${b.title}`).toBe(false);
      }
    }
  });

  it.each(KEYS)('%s: every panel and query reads the datasource variable; every panel has a description', (key) => {
    const dashboard = dashboards[key];
    const datasource = dashboard.templating.list?.find((v) => v.type === 'datasource');
    expect(datasource?.name).toBe('datasource');
    expect(datasource?.query).toBe('prometheus');
    for (const panel of panelsOf(dashboard)) {
      expect(panel.datasource?.uid, `${panel.title}`).toBe(DATASOURCE_REF);
      if (panel.type === 'row') continue;
      expect(panel.description?.trim().length ?? 0, `${panel.title} has a description`).toBeGreaterThan(20);
      expect(panel.targets?.length ?? 0, `${panel.title} has queries`).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.datasource?.uid).toBe(DATASOURCE_REF);
    }
  });

  it('detail: one panel per signal, with threshold lines equal to the definitions', () => {
    const panels = panelsOf(dashboards.detail);
    const expected = expectedLines();
    expect(expected.size).toBeGreaterThan(5);
    for (const s of SIGNALS) {
      const matching = panels.filter((p) => p.title === s.title);
      expect(matching, `one panel titled ${s.title}`).toHaveLength(1);
      const panel = matching[0]!;
      const steps = panel.fieldConfig?.defaults?.thresholds?.steps ?? [];
      expect(steps[0]).toEqual({ value: null, color: 'transparent' });
      const want = [...(expected.get(s.id) ?? new Map<number, Set<string>>())].sort(([a], [b]) => a - b);
      expect(steps.slice(1), `threshold lines on ${s.title}`).toEqual(
        want.map(([value, rules]) => ({
          value,
          color: [...rules].some((id) => severityOf(id) === 'critical') ? 'red' : 'orange',
        })),
      );
      expect(panel.fieldConfig?.defaults?.custom?.thresholdsStyle?.mode).toBe(want.length > 0 ? 'dashed' : 'off');
      // The description names every rule that draws a line, with the threshold's name.
      for (const [, rules] of want) for (const id of rules) expect(panel.description).toContain(`**${id}**`);
    }
  });

  it('detail: depth by priority, normal and low priority, with the priority signals in the depth section', () => {
    const panels = panelsOf(dashboards.detail);
    const sectionOf = (title: string): string | undefined => {
      let section: string | undefined;
      for (const p of panels) {
        if (p.type === 'row') section = p.title;
        else if (p.title === title) return section;
      }
      return undefined;
    };
    const split = panels.filter((p) => p.title === 'Depth by priority');
    expect(split).toHaveLength(1);
    const panel = split[0] as PanelJson;
    expect(panel.type).toBe('timeseries');
    expect(sectionOf('Depth by priority')).toBe('Arrivals, depth and throughput');
    // Past controller-runtime's cardinality cap the split ends: the normal and low-priority parts give way to the
    // whole depth, labelled as of unknown priority.
    const unknown = `count without (priority) (${WORKQUEUE.depth}{priority!="", priority!~"${PRIORITY_NUMBER_PATTERN}", ${VARIABLES}})`;
    expect(panel.targets?.map((t) => [t.refId, t.legendFormat, t.expr])).toEqual([
      [
        'A',
        'normal {{name}} ({{instance}})',
        `(sum without (priority) (${WORKQUEUE.depth}{priority!~"${NEGATIVE_PRIORITY_PATTERN}", ${VARIABLES}})) unless (${unknown})`,
      ],
      [
        'B',
        'low priority {{name}} ({{instance}})',
        `(sum without (priority) (${WORKQUEUE.depth}{priority=~"${NEGATIVE_PRIORITY_PATTERN}", ${VARIABLES}})) unless (${unknown})`,
      ],
      [
        'C',
        'priority unknown {{name}} ({{instance}})',
        `(sum without (priority) (${WORKQUEUE.depth}{${VARIABLES}})) and (${unknown})`,
      ],
    ]);
    // The low-priority part is the signal the diagnoses read: computed alike, or read as the rules record it.
    const lowPriority = (panelList: PanelJson[]) =>
      panelList.find((p) => p.title === signal('lowPriorityDepth').title)?.targets?.[0]?.expr;
    expect(lowPriority(panelsOf(computing.detail))).toBe(panel.targets?.[1]?.expr);
    expect(lowPriority(panels)).toBe(`${recordedName(signal('lowPriorityDepth'))}{${VARIABLES}}`);
    for (const phrase of ['startup', 'initial list', 'stops falling', 'normal line grows', '**WorkqueueBacklog**']) {
      expect(panel.description).toContain(phrase);
    }
    for (const id of [
      'lowPriorityDepth',
      'lowPriorityDepthSlope',
      'normalPriorityDepthFloor',
      'unknownPriorityDepthSeries',
    ] as const) {
      expect(sectionOf(signal(id).title), id).toBe('Arrivals, depth and throughput');
      expect(panel.description).toContain(`**${signal(id).title}**`);
    }
  });

  it('detail: queue latency and work duration heatmaps over bucket increases', () => {
    const heatmaps = panelsOf(dashboards.detail).filter((p) => p.type === 'heatmap');
    expect(heatmaps.map((p) => p.targets?.[0]?.expr)).toEqual([
      `sum by (le) (increase(${WORKQUEUE.queueDuration}_bucket{job=~"$job", instance=~"$instance", controller=~"$controller", name=~"$name"}[$__rate_interval]))`,
      `sum by (le) (increase(${WORKQUEUE.workDuration}_bucket{job=~"$job", instance=~"$instance", controller=~"$controller", name=~"$name"}[$__rate_interval]))`,
    ]);
    for (const p of heatmaps) expect(p.targets?.[0]?.format).toBe('heatmap');
  });

  it('selects queues of both label schemas: All is .* (which matches an absent controller label)', () => {
    for (const key of ['overview', 'detail'] as const) {
      const variables = dashboards[key].templating.list ?? [];
      expect(variables.map((v) => v.name)).toEqual(['datasource', 'job', 'instance', 'controller', 'name']);
      const controller = variables.find((v) => v.name === 'controller');
      expect(controller?.includeAll).toBe(true);
      expect(controller?.allValue).toBe('.*');
      expect(controller?.definition).toBe(
        `label_values(${WORKQUEUE.adds}{job=~"$job", instance=~"$instance"}, controller)`,
      );
    }
    const queueLevel = (panelList: PanelJson[]) => panelList.find((p) => p.title === 'Add rate')?.targets?.[0]?.expr;
    expect(queueLevel(panelsOf(computing.detail))).toBe(
      `sum without (priority) (rate(${WORKQUEUE.adds}{job=~"$job", instance=~"$instance", controller=~"$controller", name=~"$name"}[5m]))`,
    );
    expect(queueLevel(panelsOf(dashboards.detail))).toBe(
      `queue:workqueue_adds:rate5m{job=~"$job", instance=~"$instance", controller=~"$controller", name=~"$name"}`,
    );
    // Controller-level series have no `name`, process-level ones no `controller`: not narrowed by them.
    const controllerLevel = panelsOf(dashboards.detail).find((p) => p.title === 'Max workers');
    expect(controllerLevel?.targets?.[0]?.expr).toBe(
      `${CONTROLLER_RUNTIME.maxConcurrentReconciles}{job=~"$job", instance=~"$instance", controller=~"$controller"}`,
    );
    const processLevel = (panelList: PanelJson[]) => panelList.find((p) => p.title === 'Leader')?.targets?.[0]?.expr;
    expect(processLevel(panelsOf(computing.detail))).toBe(
      `sum without (name) (${CLIENT_GO.leaderElectionMasterStatus}{job=~"$job", instance=~"$instance"})`,
    );
    expect(processLevel(panelsOf(dashboards.detail))).toBe(
      `${recordedName(signal('leaderStatus'))}{job=~"$job", instance=~"$instance"}`,
    );
  });

  it('overview: one table of every queue linking to the detail dashboard with the queue variables', () => {
    const table = panelsOf(dashboards.overview).find((p) => p.type === 'table');
    const url = table?.fieldConfig?.defaults?.links?.[0]?.url ?? '';
    expect(url.startsWith(`/d/${DASHBOARD_UID.detail}?`)).toBe(true);
    for (const label of ['job', 'instance', 'controller', 'name']) {
      expect(url).toContain(`var-${label}=\${__data.fields.${label}}`);
    }
    expect(table?.targets?.map((t) => t.format)).toEqual(new Array(10).fill('table'));
    expect(table?.targets?.[0]?.expr).toContain('ALERTS{alertstate="firing"');
  });

  it('overview: a queue-kind column, priority where a depth series carries a priority, classic otherwise', () => {
    const table = panelsOf(dashboards.overview).find((p) => p.type === 'table') as TableJson | undefined;
    const override = table?.fieldConfig?.overrides?.find((o) =>
      o.properties.some((p) => p.id === 'displayName' && p.value === 'Queue kind'),
    );
    const field = override?.matcher.options ?? '';
    expect(field).toBe('Value #J');
    const target = table?.targets?.find((t) => `Value #${t.refId}` === field);
    expect(target?.expr).toBe(
      `(((count without (priority) (${WORKQUEUE.depth}{priority!="", ${VARIABLES}})) * 0) + 1) or ((sum without (priority) (${WORKQUEUE.depth}{${VARIABLES}})) * 0)`,
    );
    expect(target?.format).toBe('table');
    expect(override?.properties.find((p) => p.id === 'mappings')?.value).toEqual([
      {
        type: 'value',
        options: { '1': { text: 'priority', index: 0 }, '0': { text: 'classic', index: 1 } },
      },
    ]);
    // The merge joins the column's rows to the others' by their labels; the organize step places it last.
    expect(table?.transformations?.map((t) => t.id)).toEqual(['merge', 'organize']);
    const order = table?.transformations?.[1]?.options.indexByName ?? {};
    expect(order[field]).toBe(Math.max(...Object.values(order)));
    expect(table?.description).toContain('**Queue kind**');
  });

  it('diagnoses: findings from workqueue_doctor_finding, with runbook links', () => {
    const panels = panelsOf(dashboards.diagnoses);
    expect(panels.map((p) => p.type)).toEqual(['row', 'table', 'state-timeline', 'timeseries']);
    for (const p of panels.slice(1)) expect(p.targets?.[0]?.expr).toContain('workqueue_doctor_finding{');
    const json = JSON.stringify(dashboards.diagnoses);
    for (const s of ruleSettings()) expect(json).toContain(`/alerts/runbooks/${s.rule.id}.md`);
  });

  it('never takes rate or increase of a gauge', () => {
    const gauges = [
      WORKQUEUE.depth,
      WORKQUEUE.unfinishedWork,
      WORKQUEUE.longestRunningProcessor,
      CONTROLLER_RUNTIME.activeWorkers,
      CONTROLLER_RUNTIME.maxConcurrentReconciles,
      CLIENT_GO.leaderElectionMasterStatus,
    ];
    for (const key of KEYS) {
      for (const expr of dashboardExpressions(dashboards[key])) {
        for (const gauge of gauges) expect(expr).not.toMatch(new RegExp(`(rate|increase)\\(${gauge}[{\\[]`));
      }
    }
  });

  it('are committed as generated (run `workqueue-doctor generate` after changing a definition)', () => {
    for (const key of KEYS) {
      const path = OUTPUT.dashboard(key);
      expect(readFileSync(path, 'utf8'), path).toBe(files.get(path));
    }
    expect(GENERATED_DIRECTORIES.map((d) => d.dir)).toContain('dashboards');
  });
});
