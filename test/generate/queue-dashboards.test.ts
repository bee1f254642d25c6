/**
 * `queues:` in the configuration changes the detail dashboard's threshold lines as it changes the alerts: a
 * line whose value differs between queues, or that a silence removes for some, is drawn as a query with one
 * series per queue (its threshold in force), dashed in the rule's colour, instead of a fixed step; a silenced
 * queue has no series. Lines the entries leave alike for every queue stay fixed steps, and without `queues:`
 * the dashboard is the committed one.
 */
import { describe, expect, it } from 'vitest';
import { signal } from '../../src/diagnosis/signals.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { parseGenerateConfig } from '../../src/generate/generate-config.js';
import { dashboardsOf, filesByPath, type PanelJson, panelsOf, QUEUES_CONFIG } from './helpers.js';

/** The detail dashboard's panels generated with a configuration file's text. */
function detailPanels(yaml: string): PanelJson[] {
  const files = new Map(generateArtifacts(parseGenerateConfig(yaml, 'config.yaml')).map((f) => [f.path, f.content]));
  return panelsOf(dashboardsOf(files).detail);
}

type Overrides = Array<{ matcher: { id: string; options: string }; properties: Array<{ id: string; value: unknown }> }>;

function panelOf(panels: readonly PanelJson[], title: string): PanelJson {
  const found = panels.find((p) => p.title === title);
  if (found === undefined) throw new Error(`no panel ${title}`);
  return found;
}

/** The per-queue threshold queries of a panel (every target after the signal's own). */
function thresholdTargets(panel: PanelJson) {
  return (panel.targets ?? []).slice(1);
}

describe('generate applies queues: to the dashboard threshold lines', () => {
  const panels = detailPanels(QUEUES_CONFIG);
  const floor = panelOf(panels, signal('depthFloor').title);

  it("draws the overridden queue's own threshold and the default for the others, as series per queue", () => {
    const targets = thresholdTargets(floor);
    expect(targets.map((t) => [t.refId, t.legendFormat])).toEqual([
      ['B', 'minDepth (WorkqueueBacklog) {{name}} ({{instance}})'],
    ]);
    const expr = targets[0]?.expr ?? '';
    // One branch per value, on the queues of its cell: 200 on pod's, 20 on every other (unsilenced) queue's.
    expect(expr).toMatch(/name="pod", controller!="dbuser"\} \* 0\) \+ 200\)/);
    expect(expr).toMatch(/name!="pod", controller!="dbuser"\} \* 0\) \+ 20\)/);
    // Not a fixed step any more: that would draw 20 on pod's panel too.
    expect(floor.fieldConfig?.defaults?.thresholds?.steps.slice(1)).toEqual([]);
    expect(floor.fieldConfig?.defaults?.custom?.thresholdsStyle?.mode).toBe('off');
    const style = (floor.fieldConfig as { overrides?: Overrides } | undefined)?.overrides;
    expect(style).toEqual([
      {
        matcher: { id: 'byFrameRefID', options: 'B' },
        properties: [
          { id: 'color', value: { mode: 'fixed', fixedColor: 'orange' } },
          { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
        ],
      },
    ]);
    expect(floor.description).toContain(
      '**minDepth (WorkqueueBacklog)**: 20 (minDepth) for every other queue; 200 (minDepth) for `{name="pod", controller!="dbuser"}`; none (silenced) for `{controller="dbuser"}`.',
    );
  });

  it('presents no threshold for the silenced queue on any panel', () => {
    let lines = 0;
    for (const panel of panels) {
      if (panel.type !== 'timeseries') continue;
      // A silence changes every rule: no line stays a fixed step, each one excludes the silenced queue.
      expect(panel.fieldConfig?.defaults?.thresholds?.steps.slice(1) ?? [], panel.title).toEqual([]);
      for (const target of thresholdTargets(panel)) {
        if (!target.legendFormat?.includes('(Workqueue')) continue;
        const matchers = [...(target.expr ?? '').matchAll(/\{[^}]*\}/g)].map((m) => m[0]);
        expect(matchers.length, target.expr).toBeGreaterThan(0);
        for (const m of matchers) expect(m, `${panel.title}: ${target.expr}`).toContain('controller!="dbuser"');
        lines += 1;
      }
    }
    expect(lines).toBeGreaterThan(10);
  });

  it('keeps a fixed step for a line the entries leave alike for every queue', () => {
    const forOnly = detailPanels(
      'queues:\n  - name: pod\n    rules: { WorkqueueBacklog: { thresholds: { minGrowth: 0.05 }, for: 20m } }\n',
    );
    const fixedFloor = panelOf(forOnly, signal('depthFloor').title);
    expect(fixedFloor.targets).toHaveLength(1);
    expect(fixedFloor.fieldConfig?.defaults?.thresholds?.steps.slice(1).map((s) => s.value)).toEqual([20]);
    const growth = panelOf(forOnly, signal('recentDepthSlope').title);
    expect(thresholdTargets(growth).map((t) => t.legendFormat)).toEqual([
      'minGrowth (WorkqueueBacklog) {{name}} ({{instance}})',
    ]);
    expect(thresholdTargets(growth)[0]?.expr).toMatch(/name="pod"\} \* 0\) \+ 0\.05\)/);
  });

  it('leaves the detail dashboard as committed without queues:', () => {
    const committed = filesByPath().get(OUTPUT.dashboard('detail'));
    const rulesOnly = generateArtifacts(parseGenerateConfig('rules: {}\n', 'config.yaml')).find(
      (f) => f.path === OUTPUT.dashboard('detail'),
    );
    expect(rulesOnly?.content).toBe(committed);
  });
});
