/**
 * The values of the Helm chart deploy/helm/workqueue-doctor: every value with its default, schema and
 * description, from which `generate` writes values.yaml, values.schema.json and the README's values table
 * (values-tree.ts). The templates under templates/ read exactly these keys.
 *
 * The defaults run the service as deploy/standalone does (container-settings.ts); the monitoring objects are off
 * until asked for, since they need the Prometheus Operator's resources or Grafana's dashboard sidecar.
 */
import { DASHBOARD_UID, GRAFANA_FOLDER } from '../defaults.js';
import { GRAFANA_DASHBOARD_LABEL, GRAFANA_FOLDER_ANNOTATION, SELF_METRICS_INTERVAL } from '../kubernetes.js';
import { configFileSchema } from './config-schema.js';
import {
  CONTAINER_SECURITY_CONTEXT,
  POD_SECURITY_CONTEXT,
  SERVICE_PORT,
  SERVICE_RESOURCES,
  serviceProbes,
} from './container-settings.js';
import { type ChartSection, type JsonSchema, section, value } from './values-tree.js';

/** The chart's modes: what the service reads its metrics from. */
export const CHART_MODES = ['standalone', 'prometheus'] as const;

/**
 * Configuration keys the chart sets itself, so `config:` may not: the address the service listens on (the
 * container's port) and the source of the metrics (`mode`). Static targets are for a sidecar, not this chart.
 */
export const CHART_OWNED_CONFIG_KEYS = ['listen', 'targets', 'kubernetes.enabled'] as const;

/** Where the chart mounts the configuration file (`serve --config`). */
export const CONFIG_PATH = '/etc/workqueue-doctor/config.yaml';

const STRING: JsonSchema = { type: 'string' };
const BOOLEAN: JsonSchema = { type: 'boolean' };
const OBJECT: JsonSchema = { type: 'object' };
const LIST: JsonSchema = { type: 'array' };
const STRING_MAP: JsonSchema = { type: 'object', additionalProperties: { type: 'string' } };
const INTERVAL: JsonSchema = { type: 'string', pattern: '^([0-9]+(ms|s|m|h))+$' };
const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

const SECRET_MOUNT: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'secretName', 'mountPath'],
  properties: {
    name: { description: 'The volume name.', type: 'string', pattern: DNS_LABEL },
    secretName: { description: 'An existing Secret in the release namespace.', type: 'string', minLength: 1 },
    mountPath: { description: 'The directory its keys appear in.', type: 'string', pattern: '^/' },
    items: { description: 'Keys to mount, as a Secret volume lists them (key, path); default all.', type: 'array' },
  },
};

const probes = serviceProbes('http');

export const CHART_VALUES: ChartSection = section('', {
  mode: value(
    { enum: [...CHART_MODES] },
    'standalone',
    'What the service reads. `standalone`: it discovers controller pods through the Kubernetes API and scrapes ' +
      'them (config.kubernetes chooses namespaces and pods; a ClusterRole to get, list and watch pods and nothing ' +
      'else). `prometheus` (fleet mode): it runs the diagnoses as PromQL against config.prometheus.url (required) ' +
      'and gets no RBAC.',
  ),
  image: section('The container image.', {
    repository: value(
      { type: 'string', minLength: 1 },
      'workqueue-doctor',
      "The image built from the repository's Dockerfile and pushed to a registry the cluster pulls from, e.g. " +
        '`registry.example.com/platform/workqueue-doctor`. No public image is published: set this.',
    ),
    tag: value(STRING, '', "The image tag; default the chart's appVersion."),
    digest: value(
      { type: 'string', pattern: '^(sha256:[a-f0-9]{64})?$' },
      '',
      'A digest (`sha256:...`) pinning the image; when given, it is used instead of the tag.',
    ),
    pullPolicy: value({ enum: ['Always', 'IfNotPresent', 'Never'] }, 'IfNotPresent', 'The image pull policy.'),
  }),
  imagePullSecrets: value(
    LIST,
    [],
    'Secrets for pulling the image from a private registry (`- name: my-pull-secret`).',
  ),
  nameOverride: value(STRING, '', 'Replaces the chart name in the names of the objects.'),
  fullnameOverride: value(STRING, '', 'Replaces the whole name of the objects (default `<release>-workqueue-doctor`).'),
  config: value(
    configFileSchema(CHART_OWNED_CONFIG_KEYS),
    { rules: {}, queues: [] },
    "The configuration file: the same schema as every command's `--config`, every key described in " +
      'deploy/config-example.yaml and checked by values.schema.json. Rendered into a ConfigMap mounted at ' +
      `${CONFIG_PATH}; a change rolls the pod. The chart sets \`listen\` and the source (\`mode\`): ` +
      '`targets` and `kubernetes.enabled` are not accepted, and `prometheus.url` only in prometheus mode. ' +
      'Standalone: `kubernetes: {namespaces: [my-operator-system], selector: control-plane=controller-manager}` ' +
      '(no namespaces: all; no selector: every pod with a prometheus.io/port annotation). Files it names ' +
      '(api.tokenFile, scrape.bearerTokenFile, scrape.caFile, prometheus.basicAuth.passwordFile) come from ' +
      "secretMounts. Its `rules` and `queues` change the service's thresholds; the PrometheusRule and dashboards " +
      'carry the defaults unless given their regenerated files (prometheusRule.ruleFile, dashboards.json).',
  ),
  secretMounts: value(
    { type: 'array', items: SECRET_MOUNT },
    [],
    'Existing Secrets mounted read-only for the files the configuration names, e.g. `{name: prometheus-auth, ' +
      'secretName: prometheus-basic-auth, mountPath: /var/run/secrets/prometheus}` with ' +
      'config.prometheus.basicAuth.passwordFile `/var/run/secrets/prometheus/password`. The chart creates no ' +
      'Secret: no secret value passes through the values.',
  ),
  env: value(
    LIST,
    [],
    'Extra environment variables of the container (EnvVar objects). A WQD_ variable overrides the same key of the ' +
      'configuration file.',
  ),
  serviceAccount: section('The service account the pod runs as.', {
    create: value(BOOLEAN, true, 'Create it; otherwise `name` must exist.'),
    name: value(STRING, '', 'Its name; default the full name of the release.'),
    annotations: value(STRING_MAP, {}, 'Annotations of the created account.'),
    automountToken: value(
      BOOLEAN,
      true,
      "Mount the account's token: standalone mode reads pods with it; prometheus mode needs it only when the " +
        'configuration sends it to Prometheus (scrape.bearerTokenFile).',
    ),
  }),
  rbac: section('Permissions of the service account (standalone mode only; prometheus mode gets none).', {
    create: value(BOOLEAN, true, 'Grant get, list and watch on pods, nothing else.'),
    namespaced: value(
      BOOLEAN,
      false,
      'Grant it with a Role and RoleBinding in each of config.kubernetes.namespaces (which must then be listed) ' +
        'instead of a ClusterRole.',
    ),
    metricsReader: value(
      BOOLEAN,
      false,
      'Also let the account get the non-resource URL /metrics (a ClusterRole): for controllers whose metrics are ' +
        "protected (kubebuilder v4's https://:8443/metrics, kube-rbac-proxy), scraped with config.scrape." +
        'bearerTokenFile /var/run/secrets/kubernetes.io/serviceaccount/token and scrape.insecureSkipVerify or ' +
        'scrape.caFile.',
    ),
  }),
  podAnnotations: value(STRING_MAP, {}, 'Annotations of the pod.'),
  podLabels: value(STRING_MAP, {}, 'Labels of the pod, besides the selector labels.'),
  podSecurityContext: value(OBJECT, POD_SECURITY_CONTEXT, 'The pod security context (as deploy/standalone).'),
  securityContext: value(
    OBJECT,
    CONTAINER_SECURITY_CONTEXT,
    'The container security context (as deploy/standalone): it meets the restricted Pod Security profile.',
  ),
  resources: value(
    OBJECT,
    SERVICE_RESOURCES,
    "Requests and limits. The memory limit is the service's budget: it sizes every scrape limit not given from it " +
      '(docs/deployment.md, Resources). No CPU limit: it would only throttle the short bursts of scraping and evaluating.',
  ),
  livenessProbe: value(OBJECT, probes.livenessProbe, 'Liveness: /healthz answers as soon as the process listens.'),
  readinessProbe: value(
    OBJECT,
    probes.readinessProbe,
    'Readiness: /readyz answers 200 once a first evaluation has finished (seconds after start), 503 before.',
  ),
  nodeSelector: value(STRING_MAP, {}, 'Node labels the pod must run on.'),
  tolerations: value(LIST, [], 'Tolerations of the pod.'),
  affinity: value(OBJECT, {}, 'Affinity of the pod.'),
  priorityClassName: value(STRING, '', 'The priority class of the pod.'),
  stateVolume: value(
    OBJECT,
    {},
    'The volume source mounted at config.state.dir when the configuration sets it in mode standalone (the scraped ' +
      'history kept across restarts). Empty: an emptyDir, which survives container restarts; ' +
      '`persistentVolumeClaim: {claimName: ...}` also rescheduling (the Deployment then replaces its pod with the ' +
      'Recreate strategy, as the running service locks the directory).',
  ),
  service: section('The Service in front of the API, /metrics, /healthz and /readyz.', {
    type: value({ enum: ['ClusterIP', 'NodePort', 'LoadBalancer'] }, 'ClusterIP', 'The Service type.'),
    port: value(
      { type: 'integer', minimum: 1, maximum: 65_535 },
      SERVICE_PORT,
      `The Service port (named http; the container listens on ${SERVICE_PORT}).`,
    ),
    annotations: value(STRING_MAP, {}, 'Annotations of the Service.'),
  }),
  serviceMonitor: section("A Prometheus Operator ServiceMonitor for the service's own /metrics.", {
    enabled: value(BOOLEAN, false, 'Create it (needs the ServiceMonitor resource).'),
    labels: value(
      STRING_MAP,
      {},
      'Labels its Prometheus selects ServiceMonitors by; kube-prometheus-stack: `release: <its release name>`.',
    ),
    interval: value(INTERVAL, SELF_METRICS_INTERVAL, 'How often it scrapes.'),
  }),
  podMonitor: section(
    "A Prometheus Operator PodMonitor for the service's own /metrics, for a Prometheus that selects " +
      'PodMonitors only (never together with serviceMonitor: the pod would be scraped twice).',
    {
      enabled: value(BOOLEAN, false, 'Create it (needs the PodMonitor resource).'),
      labels: value(STRING_MAP, {}, 'Labels its Prometheus selects PodMonitors by.'),
      interval: value(INTERVAL, SELF_METRICS_INTERVAL, 'How often it scrapes.'),
    },
  ),
  prometheusRule: section('A Prometheus Operator PrometheusRule with the generated recording and alerting rules.', {
    enabled: value(BOOLEAN, false, 'Create it (needs the PrometheusRule resource).'),
    labels: value(
      STRING_MAP,
      {},
      'Labels its Prometheus selects rules by; kube-prometheus-stack: `release: <its release name>`; ' +
        'kube-prometheus: `prometheus: k8s`, `role: alert-rules`.',
    ),
    ruleFile: value(
      STRING,
      '',
      'A rule file used instead of the bundled one (files/workqueue-doctor.rules.yaml, the defaults): the ' +
        '`alerts/workqueue-doctor.rules.yaml` that `workqueue-doctor generate --config <this config> --out DIR` ' +
        'writes, given with `--set-file prometheusRule.ruleFile=DIR/alerts/workqueue-doctor.rules.yaml`, so the ' +
        "alerts carry the configuration's thresholds, silences and fleet selector.",
    ),
  }),
  dashboards: section("The Grafana dashboards as ConfigMaps for Grafana's dashboard sidecar.", {
    enabled: value(BOOLEAN, false, 'Create them.'),
    namespace: value(
      STRING,
      '',
      "The namespace the sidecar watches; default the release's (the Grafana chart watches only its own " +
        'unless sidecar.dashboards.searchNamespace says otherwise).',
    ),
    label: value(
      { type: 'string', minLength: 1 },
      GRAFANA_DASHBOARD_LABEL.name,
      "The label the sidecar selects ConfigMaps by (the Grafana chart's sidecar.dashboards.label).",
    ),
    labelValue: value(
      STRING,
      GRAFANA_DASHBOARD_LABEL.value,
      "The label's value (sidecar.dashboards.labelValue; any value when that is unset).",
    ),
    folderAnnotation: value(
      { type: 'string', minLength: 1 },
      GRAFANA_FOLDER_ANNOTATION,
      "The annotation naming the dashboards' folder (the sidecar's sidecar.dashboards.folderAnnotation).",
    ),
    folder: value(STRING, GRAFANA_FOLDER, 'The Grafana folder of the dashboards.'),
    json: value(
      {
        type: 'object',
        propertyNames: { enum: Object.values(DASHBOARD_UID) },
        additionalProperties: { type: 'string' },
      },
      {},
      `Dashboard JSON used instead of the bundled one, by dashboard uid (${Object.values(DASHBOARD_UID).join(', ')}): ` +
        'what `workqueue-doctor generate --config <this config> --out DIR` writes, e.g. ' +
        '`--set-file dashboards.json.workqueue-doctor-detail=DIR/dashboards/workqueue-doctor-detail.json`.',
    ),
  }),
});
