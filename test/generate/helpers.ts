/**
 * Shared by the generator tests: the generated files, dashboards walked as plain JSON, expressions collected,
 * and external tools run with their exit code and output.
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { parse } from 'yaml';
import { type RuleOverrides, ruleSettings } from '../../src/diagnosis/catalog.js';
import { conditionWith } from '../../src/diagnosis/rule.js';
import { SIGNALS } from '../../src/diagnosis/signals.js';
import { type GeneratedFile, generateArtifacts } from '../../src/generate/artifacts.js';
import { type DashboardKey, OUTPUT } from '../../src/generate/defaults.js';
import type { Expr } from '../../src/promql/expr.js';
import { runToCompletion } from '../support/prometheus.js';

export type PanelJson = {
  type: string;
  id?: number;
  title?: string;
  description?: string;
  datasource?: { type?: string; uid?: string };
  gridPos?: { x: number; y: number; w: number; h: number };
  targets?: Array<{
    expr?: string;
    datasource?: { uid?: string };
    format?: string;
    refId?: string;
    legendFormat?: string;
  }>;
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
export type RecordingRuleYaml = { record: string; expr: string };
export type RuleFileYaml = {
  groups: Array<{ name: string; interval: string; rules: Array<AlertRuleYaml | RecordingRuleYaml> }>;
};

/** The alerting rules of a rule file, in order. */
export function alertRulesOf(file: RuleFileYaml): AlertRuleYaml[] {
  return file.groups.flatMap((g) => g.rules.filter((r): r is AlertRuleYaml => 'alert' in r));
}

/** The recording rules of a rule file, in order. */
export function recordingRulesOf(file: RuleFileYaml): RecordingRuleYaml[] {
  return file.groups.flatMap((g) => g.rules.filter((r): r is RecordingRuleYaml => 'record' in r));
}

/**
 * An expression with every recorded series replaced by its recording rule's expression (in parentheses),
 * until none is left: what the alert computes, written out.
 */
export function expandRecordings(expr: string, recordings: readonly RecordingRuleYaml[]): string {
  const byName = new Map(recordings.map((r) => [r.record, r.expr]));
  return expr.replace(/[a-z_][a-z0-9_]*:[a-z0-9_:]*/g, (name) => {
    const found = byName.get(name);
    return found === undefined ? name : `(${expandRecordings(found, recordings)})`;
  });
}

/** PromQL without parentheses and spaces: two expressions with the same operands and operators in order. */
export function tokensOf(expr: string): string {
  return expr.replace(/[()\s]/g, '');
}

/** Runs a tool to completion (`runToCompletion`): its exit code and its stdout followed by its stderr. */
export async function runTool(file: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await runToCompletion(file, args);
  return { code, output: `${stdout}${stderr}` };
}

/**
 * A configuration with a `queues:` override and a silence, on queues of the simulator's `mixed` scenario (and
 * component-base's `pod`): pod's Backlog `minDepth` is 200, the `dbuser` controller's queue is silenced.
 */
export const QUEUES_CONFIG = [
  'queues:',
  '  - name: pod',
  '    rules: { WorkqueueBacklog: { thresholds: { minDepth: 200 } } }',
  '  - controller: dbuser',
  '    silenced: true',
  '',
].join('\n');

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
    .replace(/\$(cluster|namespace|job|instance|controller|name|target)\b/g, '.*');
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

/**
 * Threshold lines as the definitions imply them, found independently of the generator: change one threshold
 * at a time and see which `signal op number` comparisons change; each such signal gets a line at the value
 * in force. A comparison with a constant (a fact of the physics, not a threshold) draws its line too. By signal
 * id, then value, the ids of the rules that draw it.
 */
export function expectedLines(overrides: RuleOverrides = {}): Map<string, Map<number, Set<string>>> {
  const lines = new Map<string, Map<number, Set<string>>>();
  const signalByJson = new Map(SIGNALS.map((s) => [JSON.stringify(s.expr), s.id]));
  for (const settings of ruleSettings(overrides)) {
    if (!settings.enabled) continue;
    const base = conditionWith(settings.rule, settings.thresholds);
    for (const name of Object.keys(settings.thresholds)) {
      const moved = conditionWith(settings.rule, {
        ...settings.thresholds,
        [name]: (settings.thresholds[name] ?? 0) * 1.37 + 0.123,
      });
      // Signal and threshold nodes are read as what they compute: the signal's expression, a number.
      const shown = (e: Expr): Expr => (e.kind === 'signal' ? e.expr : e);
      const numberIn = (e: Expr): number | undefined =>
        e.kind === 'number' || e.kind === 'threshold' ? e.value : undefined;
      const walk = (a: Expr, b: Expr): void => {
        if (a.kind !== 'binary' || b.kind !== 'binary') return;
        const id = signalByJson.get(JSON.stringify(shown(a.lhs)));
        const aValue = numberIn(a.rhs);
        if (['>', '<', '>=', '<=', '==', '!='].includes(a.op) && id !== undefined && aValue !== undefined) {
          const bValue = numberIn(b.rhs);
          if (bValue !== undefined && bValue !== aValue) {
            const byValue = lines.get(id) ?? new Map<number, Set<string>>();
            const rules = byValue.get(aValue) ?? new Set<string>();
            rules.add(settings.rule.id);
            byValue.set(aValue, rules);
            lines.set(id, byValue);
          }
          return;
        }
        walk(a.lhs, b.lhs);
        walk(a.rhs, b.rhs);
      };
      walk(base, moved);
    }
    const constants = (e: Expr): void => {
      if (e.kind !== 'binary') return;
      const id = e.lhs.kind === 'signal' ? signalByJson.get(JSON.stringify(e.lhs.expr)) : undefined;
      if (['>', '<', '>=', '<=', '==', '!='].includes(e.op) && id !== undefined && e.rhs.kind === 'number') {
        const byValue = lines.get(id) ?? new Map<number, Set<string>>();
        byValue.set(e.rhs.value, (byValue.get(e.rhs.value) ?? new Set<string>()).add(settings.rule.id));
        lines.set(id, byValue);
        return;
      }
      constants(e.lhs);
      constants(e.rhs);
    };
    constants(base);
  }
  return lines;
}
