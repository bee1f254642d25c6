/**
 * Every generated file, as path and content: the dashboards, the alert rules, the runbooks, the monitoring
 * manifests and the Helm chart's generated parts (helm/chart-files.ts), all from the diagnosis definitions with the
 * user's overrides applied, and the report's JSON Schema (from `diagnosis/report-schema.ts`; no override changes
 * it). Pure: the CLI writes the files or compares them with the ones on disk.
 *
 * Output is deterministic: the same definitions and overrides give the same bytes (keys in a fixed order,
 * a trailing newline).
 */
import type { Dashboard } from '@grafana/grafana-foundation-sdk/dashboard';
import { parse } from 'yaml';
import { type RuleOverrides, ruleSettings } from '../diagnosis/catalog.js';
import { reportJsonSchema } from '../diagnosis/report-schema.js';
import { EVALUATION_INTERVAL_MS } from '../diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { type AlertingRule, alertRuleFile, type RuleFile } from './alert-rules.js';
import { alertTestFiles } from './alert-tests.js';
import { alertmanagerExample } from './alertmanager.js';
import { analyseRule, type RuleAnalysis, ruleAnalyses } from './condition-analysis.js';
import { COMPUTE_EVERY_SIGNAL, type RecordedSeries } from './dashboards/common.js';
import { detailDashboard } from './dashboards/detail.js';
import { diagnosesDashboard } from './dashboards/diagnoses.js';
import { overviewDashboard } from './dashboards/overview.js';
import { ARTIFACT_NAME, DASHBOARD_UID, type DashboardKey, OUTPUT } from './defaults.js';
import { jsonText, yamlText } from './file-text.js';
import { helmChartFiles } from './helm/chart-files.js';
import {
  dashboardConfigMap,
  grafanaProvisioning,
  kustomization,
  prometheusRule,
  serviceMonitor,
} from './kubernetes.js';
import type { QueryScope } from './query-scope.js';
import { recordingPlan } from './recording-rules.js';
import { runbook } from './runbooks.js';

export type GeneratedFile = { readonly path: string; readonly content: string };

export type GenerateOptions = {
  readonly overrides?: RuleOverrides;
  /** The fleet selector and the cluster and namespace labels; none by default. */
  readonly scope?: QueryScope;
  /** Base of the runbook links in alerts and dashboards; default `DEFAULT_RUNBOOK_BASE_URL`. */
  readonly runbookBaseUrl?: string;
  /**
   * Whether the dashboards read the signals the alert rules file records (default), or compute every signal
   * themselves, for a Prometheus that does not load the rules.
   */
  readonly dashboardsReadRecordings?: boolean;
};

/** Directories whose files of the given extension are all generated: anything else there is stale. */
export const GENERATED_DIRECTORIES: ReadonlyArray<{ readonly dir: string; readonly extension: string }> = [
  { dir: OUTPUT.dashboardsDir, extension: '.json' },
  { dir: OUTPUT.runbooksDir, extension: '.md' },
  { dir: OUTPUT.monitoringDir, extension: '.yaml' },
  { dir: OUTPUT.alertTestsDir, extension: '.yaml' },
  { dir: OUTPUT.helmFilesDir, extension: '.yaml' },
  { dir: OUTPUT.helmDashboardsDir, extension: '.json' },
];

export function buildDashboards(
  analyses: readonly RuleAnalysis[],
  runbookBaseUrl: string,
  scope: QueryScope = {},
  recorded: RecordedSeries = COMPUTE_EVERY_SIGNAL,
  overrides: RuleOverrides = {},
): Record<DashboardKey, Dashboard> {
  return {
    overview: overviewDashboard(analyses, scope, recorded),
    // The detail dashboard draws the thresholds of `overrides.queues` per queue.
    detail: detailDashboard(analyses, scope, recorded, overrides),
    diagnoses: diagnosesDashboard(analyses, runbookBaseUrl),
  };
}

export function generateArtifacts(options: GenerateOptions = {}): GeneratedFile[] {
  const runbookBaseUrl = options.runbookBaseUrl ?? DEFAULT_RUNBOOK_BASE_URL;
  const analyses = ruleAnalyses(options.overrides);
  const scope = options.scope ?? {};
  const files: GeneratedFile[] = [];

  const recorded =
    options.dashboardsReadRecordings === false ? COMPUTE_EVERY_SIGNAL : recordingPlan(analyses, scope).seriesOf;
  const dashboards = buildDashboards(analyses, runbookBaseUrl, scope, recorded, options.overrides);
  const dashboardKeys = Object.keys(DASHBOARD_UID) as DashboardKey[];
  const dashboardJson = new Map(dashboardKeys.map((key) => [key, jsonText(dashboards[key])]));
  for (const key of dashboardKeys) files.push({ path: OUTPUT.dashboard(key), content: dashboardJson.get(key) ?? '' });

  const rules = alertRuleFile(analyses, {
    groupName: ARTIFACT_NAME,
    evaluationIntervalMs: EVALUATION_INTERVAL_MS,
    runbookBaseUrl,
    scope,
    ...(options.overrides !== undefined ? { overrides: options.overrides } : {}),
  });
  const ruleFileText = yamlText(rules);
  files.push({ path: OUTPUT.alertRules, content: ruleFileText });

  // Runbooks for every diagnosis, enabled or not: the service links to them too.
  const allAnalyses = ruleSettings(options.overrides).map(analyseRule);
  for (const analysis of allAnalyses) {
    files.push({ path: OUTPUT.runbook(analysis.settings.rule.id), content: runbook(analysis, scope) });
  }

  const monitoring: GeneratedFile[] = [
    { path: OUTPUT.prometheusRule, content: yamlText(prometheusRule(rules)) },
    { path: OUTPUT.serviceMonitor, content: yamlText(serviceMonitor()) },
  ];
  for (const key of dashboardKeys) {
    monitoring.push({
      path: OUTPUT.dashboardConfigMap(key),
      content: yamlText(dashboardConfigMap(key, dashboardJson.get(key) ?? '')),
    });
  }
  const resources = monitoring.map((f) => f.path.slice(OUTPUT.monitoringDir.length + 1));
  files.push(...monitoring);
  files.push({ path: OUTPUT.kustomization, content: yamlText(kustomization(resources)) });
  files.push({ path: OUTPUT.alertmanagerExample, content: yamlText(alertmanagerExample(analyses, scope)) });
  files.push({ path: OUTPUT.grafanaProvisioning, content: yamlText(grafanaProvisioning()) });
  files.push({ path: OUTPUT.reportSchema, content: jsonText(reportJsonSchema()) });
  files.push(...helmChartFiles({ ruleFile: ruleFileText, dashboards: dashboardJson }));

  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Every generated file, with the promtool tests of the alert rules (`alert-tests.ts`), which simulate
 * scenarios and so are asynchronous.
 */
export async function generateAllArtifacts(options: GenerateOptions = {}): Promise<GeneratedFile[]> {
  const files = generateArtifacts(options);
  const analyses = ruleAnalyses(options.overrides);
  const scope = options.scope ?? {};
  const ruleFile = parse(files.find((f) => f.path === OUTPUT.alertRules)?.content ?? '') as RuleFile;
  const tests = await alertTestFiles({
    analyses,
    rules: ruleFile.groups.flatMap((g) => g.rules.filter((r): r is AlertingRule => 'alert' in r)),
    plan: recordingPlan(analyses, scope),
    scope,
    evaluationIntervalMs: EVALUATION_INTERVAL_MS,
  });
  return [...files, ...tests].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
