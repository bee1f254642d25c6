/**
 * README.md of the Helm chart: building the image, installing each mode, secrets, the monitoring objects, the
 * sidecar (a patch for a controller's own Deployment, with what its readiness means for the pod), and the table of
 * every value (key, type, default, description) from chart-values.ts.
 */
import { stringify } from 'yaml';
import { DEFAULT_TARGET } from '../../config/service-defaults.js';
import { ARTIFACT_NAME, DASHBOARD_UID, GENERATED_NOTICE, OUTPUT } from '../defaults.js';
import { CHART_VALUES, CONFIG_PATH } from './chart-values.js';
import { SERVICE_PORT } from './container-settings.js';
import { sidecarPatch } from './sidecar-patch.js';
import { typeName, valuesOf } from './values-tree.js';

/** The heading above the sidecar patch's YAML block (tests find the block by it). */
export const SIDECAR_PATCH_HEADING = '### The patch';
/** The image the README's examples use: a registry of the reader's, never a published one. */
const EXAMPLE_IMAGE = 'registry.example.com/platform/workqueue-doctor';

function yamlBlock(value: unknown): string {
  return ['```yaml', stringify(value, { lineWidth: 0 }).trimEnd(), '```'].join('\n');
}

function tableCell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function valuesTable(): string {
  const rows = valuesOf(CHART_VALUES).map(
    ({ key, value }) =>
      `| \`${key}\` | ${typeName(value.schema)} | \`${tableCell(JSON.stringify(value.default))}\` | ${tableCell(value.description)} |`,
  );
  return ['| Key | Type | Default | Description |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

export function chartReadme(version: string): string {
  const chart = OUTPUT.helmChartDir;
  const release = 'wqd';
  const fullname = `${release}-${ARTIFACT_NAME}`;
  const image = `${EXAMPLE_IMAGE}:${version}`;
  return `<!-- ${GENERATED_NOTICE} -->
# ${ARTIFACT_NAME} Helm chart

Runs ${ARTIFACT_NAME} as a Deployment that diagnoses the work queues of Kubernetes controllers, in one of two
modes: \`standalone\` discovers controller pods through the Kubernetes API and scrapes them; \`prometheus\` (fleet
mode) runs the diagnoses as PromQL against a Prometheus-compatible API. Optionally with a ServiceMonitor or
PodMonitor for its own /metrics, a PrometheusRule with the generated recording and alerting rules, and the Grafana
dashboards as ConfigMaps for Grafana's dashboard sidecar. To run it inside a controller's own pod instead, see
[The sidecar](#the-sidecar).

Chart version ${version}, app version ${version}.

## The image

No image is published. Build it from the repository's Dockerfile, push it to a registry your cluster pulls from,
and set \`image.repository\` (the tag defaults to the chart's appVersion; \`image.digest\` pins it):

\`\`\`sh
docker build -t ${image} .
docker push ${image}
\`\`\`

## Standalone: pod discovery

\`\`\`yaml
# standalone.yaml
image:
  repository: ${EXAMPLE_IMAGE}
config:
  kubernetes:
    namespaces: [my-operator-system]
    selector: control-plane=controller-manager
\`\`\`

\`\`\`sh
kubectl create namespace ${ARTIFACT_NAME}
kubectl label namespace ${ARTIFACT_NAME} pod-security.kubernetes.io/enforce=restricted
helm install ${release} ${chart} -n ${ARTIFACT_NAME} -f standalone.yaml
kubectl -n ${ARTIFACT_NAME} port-forward svc/${fullname} ${SERVICE_PORT}   # then: curl localhost:${SERVICE_PORT}/api/v1/diagnosis
\`\`\`

Each matching pod is scraped on its \`prometheus.io/port\`, \`prometheus.io/path\` and \`prometheus.io/scheme\`
annotations (\`config.kubernetes.port\` for pods without them). The service account may get, list and watch pods
and nothing else, as deploy/standalone's: a ClusterRole, or with \`rbac.namespaced: true\` a Role in each watched
namespace. Controllers whose /metrics need a token (kubebuilder v4's https://:8443) also need
\`rbac.metricsReader: true\` and \`config.scrape.bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\`
with \`config.scrape.insecureSkipVerify: true\` or a \`config.scrape.caFile\`.

## Fleet mode: a Prometheus

\`\`\`yaml
# fleet.yaml
mode: prometheus
image:
  repository: ${EXAMPLE_IMAGE}
config:
  prometheus:
    url: http://prometheus-operated.monitoring.svc:9090
  selector: 'job=~"my-operator.*"'
  clusterLabel: cluster
\`\`\`

\`\`\`sh
helm install ${release} ${chart} -n ${ARTIFACT_NAME} -f fleet.yaml
\`\`\`

No RBAC is created: the service reads nothing from the Kubernetes API.

## Configuration and secrets

\`config\` is the configuration file every command reads (\`--config\`), described key by key in
deploy/config-example.yaml and checked by values.schema.json before anything is rendered. It is mounted at
${CONFIG_PATH}; a change rolls the pod. Secrets are never values: create the Secret
yourself, mount it with \`secretMounts\`, then name the file in the configuration:

\`\`\`yaml
secretMounts:
  - name: prometheus-auth
    secretName: prometheus-basic-auth   # kubectl create secret generic prometheus-basic-auth --from-file=password
    mountPath: /var/run/secrets/prometheus
config:
  prometheus:
    basicAuth:
      username: ${ARTIFACT_NAME}
      passwordFile: /var/run/secrets/prometheus/password
\`\`\`

The same way: \`api.tokenFile\` (a bearer token for /api/v1), \`scrape.bearerTokenFile\`, \`scrape.caFile\`.

## Alerts and dashboards

\`\`\`yaml
serviceMonitor:
  enabled: true
  labels: { release: kube-prometheus-stack }
prometheusRule:
  enabled: true
  labels: { release: kube-prometheus-stack }
dashboards:
  enabled: true
  namespace: monitoring   # where Grafana's sidecar looks
\`\`\`

The bundled rules and dashboards (files/) are those of alerts/ and dashboards/: the default thresholds, no fleet
selector. When \`config\` changes thresholds (\`rules\`, \`queues\`) or sets \`selector\`, \`clusterLabel\` or
\`namespaceLabel\`, generate them from the same configuration and hand them to the chart:

\`\`\`sh
workqueue-doctor generate --config config.yaml --out generated   # config.yaml: the value of \`config\`
helm upgrade ${release} ${chart} -n ${ARTIFACT_NAME} -f values.yaml \\
  --set-file prometheusRule.ruleFile=generated/${OUTPUT.alertRules} \\
${Object.values(DASHBOARD_UID)
  .map((uid) => `  --set-file dashboards.json.${uid}=generated/dashboards/${uid}.json`)
  .join(' \\\n')}
\`\`\`

## The sidecar

To diagnose one controller from inside its own pod, add the container to the controller's Deployment: it scrapes
the controller's metrics over loopback (${DEFAULT_TARGET}; change \`--target\` to your controller's metrics
address) and serves the diagnoses on port ${SERVICE_PORT}. This chart does not render it: save
[the patch](#the-patch) below as ${ARTIFACT_NAME}-sidecar.yaml, set the name and namespace of your Deployment in it,
and apply it, list it under \`patches:\` of your kustomization, or copy the container into your controller's chart:

\`\`\`sh
kubectl -n my-controller-system patch deployment my-controller --type strategic --patch-file ${ARTIFACT_NAME}-sidecar.yaml
\`\`\`

deploy/sidecar/plain and deploy/sidecar/secure (metrics behind authentication on https://:8443) are the same sidecar
as kustomize overlays, every setting explained; deploy/sidecar/monitoring scrapes the sidecar's own /metrics.

**Readiness.** The sidecar's readiness counts toward the pod's: the pod is Ready only when every container is.
The sidecar's /readyz answers 503 from its start until its first evaluation has finished (the first scrape, bounded
by the scrape timeout, then one evaluation: seconds), and 200 from then on, whether or not the controller's metrics
can be read (that is reported as the WorkqueueNotObservable finding). Until then the pod is not Ready: a controller
serving webhooks (admission, conversion) or anything else behind a Service has no endpoints for those seconds, and
every rollout waits for the sidecar too. For such a controller, take the sidecar out of the pod's readiness: remove
its \`readinessProbe\` (a container without one is ready once started), or point it at /healthz, which answers as
soon as the process listens. Whether it has diagnosed yet stays visible on its /readyz and its API.

${SIDECAR_PATCH_HEADING}

${yamlBlock(sidecarPatch(image))}

## Values

${valuesTable()}

## Regenerating

Chart.yaml, values.yaml, values.schema.json, this README and files/ are written by \`workqueue-doctor generate\`
from src/generate/helm/ (\`npx tsx src/cli/bin.ts generate\` in the repository; \`generate --check\` fails when they
are stale); templates/ is written by hand.
`;
}
