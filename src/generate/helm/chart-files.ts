/**
 * The generated parts of the Helm chart deploy/helm/workqueue-doctor: Chart.yaml (version and appVersion the
 * package's), values.yaml, values.schema.json and README.md (all from chart-values.ts), and under files/ copies of
 * the alert rules and the dashboards, which the templates include with `.Files.Get`: Helm does not render a file's
 * text, so the alerts' `{{ $labels.name }}` reach Prometheus as written. templates/ is written by hand.
 *
 * Contract: the copies under files/ are byte for byte the rule file and dashboards `generate` writes (alerts/,
 * dashboards/), with the same overrides.
 */
import { packageVersion } from '../../util/version.js';
import { ARTIFACT_NAME, type DashboardKey, GENERATED_NOTICE, OUTPUT } from '../defaults.js';
import { jsonText, yamlText } from '../file-text.js';
import { chartReadme } from './chart-readme.js';
import { CHART_VALUES } from './chart-values.js';
import { type JsonSchema, schemaOf, valuesYaml } from './values-tree.js';

export type ChartInputs = {
  /** The text of the alert rule file (alerts/workqueue-doctor.rules.yaml). */
  readonly ruleFile: string;
  /** The JSON text of each dashboard. */
  readonly dashboards: ReadonlyMap<DashboardKey, string>;
};

export function chartMetadata(version: string): Record<string, unknown> {
  return {
    apiVersion: 'v2',
    name: ARTIFACT_NAME,
    description:
      'Diagnoses Kubernetes controller work queues from their client-go metrics, by discovering controller pods or ' +
      'from a Prometheus; with its alert rules, recording rules and Grafana dashboards.',
    type: 'application',
    version,
    appVersion: version,
    keywords: ['kubernetes', 'controller', 'workqueue', 'client-go', 'prometheus', 'grafana'],
  };
}

/** values.schema.json: the values' schema; `global` is accepted for use as a subchart (Helm passes it down). */
export function valuesSchema(): JsonSchema {
  const schema = schemaOf(CHART_VALUES);
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: `${ARTIFACT_NAME} chart values`,
    type: 'object',
    additionalProperties: false,
    properties: {
      ...(schema['properties'] as Record<string, JsonSchema>),
      global: { description: 'Global values of a parent chart (unused).', type: 'object' },
    },
  };
}

export function helmChartFiles(inputs: ChartInputs): Array<{ path: string; content: string }> {
  const version = packageVersion();
  const files: Array<{ path: string; content: string }> = [
    { path: OUTPUT.helmChart, content: yamlText(chartMetadata(version)) },
    {
      path: OUTPUT.helmValues,
      content: valuesYaml(CHART_VALUES, [
        GENERATED_NOTICE,
        'Every value is described in README.md and checked by values.schema.json.',
      ]),
    },
    { path: OUTPUT.helmValuesSchema, content: jsonText(valuesSchema()) },
    { path: OUTPUT.helmReadme, content: chartReadme(version) },
    { path: OUTPUT.helmAlertRules, content: inputs.ruleFile },
  ];
  for (const [key, json] of inputs.dashboards) files.push({ path: OUTPUT.helmDashboard(key), content: json });
  return files;
}
