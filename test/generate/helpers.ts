/** Shared by the generator tests: the generated files, dashboards walked as plain JSON, expressions collected. */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { parse } from 'yaml';
import type { RuleOverrides } from '../../src/diagnosis/catalog.js';
import { type GeneratedFile, generateArtifacts } from '../../src/generate/artifacts.js';
import { type DashboardKey, OUTPUT } from '../../src/generate/defaults.js';

export type PanelJson = {
  type: string;
  id?: number;
  title?: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { x: number; y: number; w: number; h: number };
  targets?: Array<{ expr?: string; datasource?: { uid?: string }; format?: string; refId?: string }>;
  fieldConfig?: {
    defaults?: {
      thresholds?: { steps: Array<{ value: number | null; color: string }> };
      custom?: { thresholdsStyle?: { mode: string } };
      links?: Array<{ url?: string }>;
    };
  };
};

export type AlertRuleYaml = {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
};
export type RuleFileYaml = { groups: Array<{ name: string; interval: string; rules: AlertRuleYaml[] }> };

export function filesByPath(overrides?: RuleOverrides): Map<string, string> {
  const files: GeneratedFile[] = generateArtifacts(overrides === undefined ? {} : { overrides });
  return new Map(files.map((f) => [f.path, f.content]));
}

export function dashboardsOf(files: ReadonlyMap<string, string>): Record<DashboardKey, Dashboard> {
  const read = (key: DashboardKey): Dashboard => JSON.parse(files.get(OUTPUT.dashboard(key)) ?? 'null') as Dashboard;
  return { overview: read('overview'), detail: read('detail'), diagnoses: read('diagnoses') };
}

export function panelsOf(dashboard: Dashboard): PanelJson[] {
  return (dashboard.panels ?? []) as unknown as PanelJson[];
}

export function ruleFileOf(files: ReadonlyMap<string, string>): RuleFileYaml {
  return parse(files.get(OUTPUT.alertRules) ?? '') as RuleFileYaml;
}

/** Every PromQL expression of a dashboard: panel targets and the selectors inside variable queries. */
export function dashboardExpressions(dashboard: Dashboard): string[] {
  const exprs: string[] = [];
  for (const panel of panelsOf(dashboard)) {
    for (const target of panel.targets ?? []) if (target.expr !== undefined) exprs.push(target.expr);
  }
  for (const variable of dashboard.templating.list ?? []) {
    if (variable.type !== 'query') continue;
    const definition = variable.definition ?? '';
    const match = /^label_values\((.*), [A-Za-z_][A-Za-z0-9_]*\)$/.exec(definition);
    if (match?.[1] === undefined) throw new Error(`unexpected variable query ${definition}`);
    exprs.push(match[1]);
  }
  return exprs;
}

/** Grafana's variables replaced as Grafana would with All selected and a 5m rate interval. */
export function substituteVariables(expr: string): string {
  return expr
    .replace(/\$__rate_interval/g, '5m')
    .replace(/\$__interval/g, '1m')
    .replace(/\$(job|instance|controller|name|target)\b/g, '.*');
}

/**
 * The `printf` queries inside an alert annotation, with each `%q` filled with a quoted value (default the
 * empty string, which matches an absent label) in order.
 */
export function annotationQueries(annotation: string, values: (index: number) => string = () => ''): string[] {
  const out: string[] = [];
  for (const match of annotation.matchAll(/printf `([^`]*)`((?: \$labels\.[A-Za-z_][A-Za-z0-9_]*)+) \| query/g)) {
    const format = match[1] ?? '';
    let index = 0;
    out.push(
      format.replace(/%q|%%/g, (verb) => {
        if (verb === '%%') return '%';
        const value = JSON.stringify(values(index));
        index += 1;
        return value;
      }),
    );
  }
  return out;
}
