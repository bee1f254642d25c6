/**
 * The monitoring resources for a cluster with the Prometheus Operator and Grafana's dashboard sidecar: the
 * alert rules as a PrometheusRule, each dashboard as a ConfigMap the sidecar picks up, a Grafana file
 * provisioning example, and a kustomization listing the resources.
 */
import type { RuleFile } from './alert-rules.js';
import { ARTIFACT_NAME, DASHBOARD_UID, type DashboardKey, GRAFANA_FOLDER } from './defaults.js';

const NAME_LABEL = 'app.kubernetes.io/name';
const COMPONENT_LABEL = 'app.kubernetes.io/component';

/** The label Grafana's dashboard sidecar selects ConfigMaps by (kube-prometheus-stack's default), and its value. */
export const GRAFANA_DASHBOARD_LABEL = { name: 'grafana_dashboard', value: '1' } as const;
/** The annotation naming a dashboard ConfigMap's Grafana folder (the sidecar's `folderAnnotation`). */
export const GRAFANA_FOLDER_ANNOTATION = 'grafana_folder';
/** How often a ServiceMonitor or PodMonitor scrapes the service's own /metrics. */
export const SELF_METRICS_INTERVAL = '30s';

/**
 * The PrometheusRule. The `prometheus` and `role` labels are the ones kube-prometheus' rule selector
 * matches; other installations (kube-prometheus-stack: `release: <name>`) add theirs in an overlay.
 */
export function prometheusRule(rules: RuleFile): Record<string, unknown> {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: ARTIFACT_NAME,
      labels: {
        [NAME_LABEL]: ARTIFACT_NAME,
        [COMPONENT_LABEL]: 'alert-rules',
        prometheus: 'k8s',
        role: 'alert-rules',
      },
    },
    spec: rules,
  };
}

/** Namespace of the standalone service (deploy/standalone), whose own /metrics the ServiceMonitor selects. */
export const SERVICE_NAMESPACE = ARTIFACT_NAME;

/**
 * A ServiceMonitor for the standalone service's own /metrics (its health, scrape results and one
 * `workqueue_doctor_finding` series per active finding, which the diagnoses dashboard shows). It selects the
 * Service by its labels in the service's namespace, wherever this kustomization is applied.
 */
export function serviceMonitor(): Record<string, unknown> {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'ServiceMonitor',
    metadata: { name: ARTIFACT_NAME, labels: { [NAME_LABEL]: ARTIFACT_NAME, [COMPONENT_LABEL]: 'self-metrics' } },
    spec: {
      namespaceSelector: { matchNames: [SERVICE_NAMESPACE] },
      selector: { matchLabels: { [NAME_LABEL]: ARTIFACT_NAME, [COMPONENT_LABEL]: 'server' } },
      endpoints: [{ port: 'http', path: '/metrics', interval: SELF_METRICS_INTERVAL, scheme: 'http' }],
    },
  };
}

/** The file name a dashboard has inside its ConfigMap and in a provisioning directory. */
export function dashboardFileName(key: DashboardKey): string {
  return `${DASHBOARD_UID[key]}.json`;
}

/** A dashboard as a ConfigMap for Grafana's sidecar (label `grafana_dashboard: "1"`, folder annotation). */
export function dashboardConfigMap(key: DashboardKey, dashboardJson: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `${DASHBOARD_UID[key]}-dashboard`,
      labels: {
        [NAME_LABEL]: ARTIFACT_NAME,
        [COMPONENT_LABEL]: 'dashboards',
        [GRAFANA_DASHBOARD_LABEL.name]: GRAFANA_DASHBOARD_LABEL.value,
      },
      annotations: { [GRAFANA_FOLDER_ANNOTATION]: GRAFANA_FOLDER },
    },
    data: { [dashboardFileName(key)]: dashboardJson },
  };
}

/** Grafana file provisioning: a dashboards provider reading the JSON files from one directory. */
export function grafanaProvisioning(): Record<string, unknown> {
  return {
    apiVersion: 1,
    providers: [
      {
        name: ARTIFACT_NAME,
        orgId: 1,
        folder: GRAFANA_FOLDER,
        type: 'file',
        disableDeletion: false,
        allowUiUpdates: false,
        updateIntervalSeconds: 60,
        options: { path: `/var/lib/grafana/dashboards/${ARTIFACT_NAME}`, foldersFromFilesStructure: false },
      },
    ],
  };
}

export function kustomization(resources: readonly string[]): Record<string, unknown> {
  return {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: [...resources],
  };
}
