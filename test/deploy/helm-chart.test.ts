/**
 * deploy/helm/workqueue-doctor, with helm 4.1 (helm.ts): the chart lints with --strict and renders each mode
 * (standalone, prometheus) with the monitoring objects off and on, and every rendered object validates against the
 * Kubernetes (and Prometheus Operator) schemas with no unknown field. Compared with the kustomize renders rather
 * than with constants: the pod and container run as deploy/standalone's (security contexts, probes, resources),
 * standalone gets deploy/standalone's RBAC and prometheus mode none, the ServiceMonitor scrapes as
 * deploy/monitoring's, and the README's sidecar patch adds deploy/sidecar/plain's container. The configuration
 * ConfigMap is what `serve` accepts (the real command line and loader); the PrometheusRule holds exactly the rule
 * file in alerts/ and the dashboard ConfigMaps exactly dashboards/*.json, labelled for Grafana's sidecar. Bad
 * values are refused by helm, naming the value.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { IPodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import type { IRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import type { IRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IService } from 'kubernetes-models/v1/Service';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { ServiceConfig } from '../../src/config/service-config.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { SIDECAR_PATCH_HEADING } from '../../src/generate/helm/chart-readme.js';
import { type HelmResult, helmV4, runHelm } from './helm.js';
import { kubectlV5, kustomize } from './kubectl.js';
import { describeObject, type KubernetesObject, schemaProblems } from './kubernetes-schema.js';
import { container, ofKind, only, parseObjects, podSpec, sameKeyAndValues } from './rendered-objects.js';
import { flag, serveConfig } from './serve-arguments.js';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHART = join(ROOT, OUTPUT.helmChartDir);
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const RELEASE = 'wqd';
const NAMESPACE = 'wqd-system';
const CONTAINER = 'workqueue-doctor';
const PROMETHEUS_URL = 'http://prometheus-operated.monitoring.svc:9090';
/** Rendering may first fetch and extract helm and kubectl. */
const RENDER_TIMEOUT = { timeout: 240_000 };

const work = mkdtempSync(join(tmpdir(), 'wqd-helm-chart-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let fileCount = 0;
/** A values (or other) file in the work directory. */
function writeWorkFile(text: string, extension = 'yaml'): string {
  const path = join(work, `file-${++fileCount}.${extension}`);
  writeFileSync(path, text);
  return path;
}

/** `helm <command> CHART -f <values>` plus `args`; `template` gets the release name and namespace. */
async function helm(command: 'lint' | 'template', values: object, args: readonly string[] = []): Promise<HelmResult> {
  const binary = await helmV4();
  const release = command === 'template' ? [RELEASE, '--namespace', NAMESPACE] : ['--strict'];
  return runHelm(binary, [command, ...release, CHART, '-f', writeWorkFile(stringify(values)), ...args]);
}

/** `helm template` parsed into objects; a failed render fails the test with helm's message. */
async function rendered(values: object, args: readonly string[] = []): Promise<KubernetesObject[]> {
  const result = await helm('template', values, args);
  expect(result.stderr, 'helm template: stderr').toBe('');
  expect(result.code, 'helm template: exit code').toBe(0);
  return parseObjects(result.stdout, 'helm template');
}

const kustomizeRenders = new Map<string, Promise<KubernetesObject[]>>();
/** `kubectl kustomize deploy/<dir>`, parsed. */
function kustomized(dir: string): Promise<KubernetesObject[]> {
  let objects = kustomizeRenders.get(dir);
  if (objects === undefined) {
    objects = kubectlV5()
      .then((kubectl) => kustomize(kubectl, join(ROOT, 'deploy', dir)))
      .then(({ yaml }) => parseObjects(yaml, dir));
    kustomizeRenders.set(dir, objects);
  }
  return objects;
}

async function standaloneContainer(): Promise<{ deployment: IDeployment; container: IContainer }> {
  const deployment = only<IDeployment>(await kustomized('standalone'), 'Deployment');
  return { deployment, container: container(deployment, CONTAINER) };
}

/** The configuration `serve` resolves in the rendered pod: its arguments, and the file from the mounted ConfigMap. */
function renderedServeConfig(objects: readonly KubernetesObject[]): ServiceConfig {
  const deployment = only<IDeployment>(objects, 'Deployment');
  const c = container(deployment, CONTAINER);
  const args = c.args ?? [];
  const configPath = flag(args, '--config');
  expect(configPath, '--config').toBeDefined();
  const mount = c.volumeMounts?.find((m) => configPath!.startsWith(`${m.mountPath}/`));
  expect(mount, 'a volume mounted at the config directory').toBeDefined();
  expect(mount?.readOnly).toBe(true);
  const volume = podSpec(deployment).volumes?.find((v) => v.name === mount?.name);
  const configMap = ofKind<IConfigMap>(objects, 'ConfigMap').find((m) => m.metadata?.name === volume?.configMap?.name);
  const text = configMap?.data?.[configPath!.slice(mount!.mountPath.length + 1)];
  expect(text, 'the configuration file in the mounted ConfigMap').toBeDefined();
  return serveConfig(args, new Map([[configPath!, text!]]));
}

const STANDALONE = {
  config: { kubernetes: { namespaces: ['my-operator-system'], selector: 'control-plane=controller-manager' } },
};
const FLEET = { mode: 'prometheus', config: { prometheus: { url: PROMETHEUS_URL }, selector: 'job=~"my-operator.*"' } };
const MONITORING = {
  serviceMonitor: { enabled: true },
  prometheusRule: { enabled: true },
  dashboards: { enabled: true },
};
/** The other monitoring choices: a PodMonitor, and dashboards for a sidecar with its own label and folder. */
const OTHER_MONITORING = {
  podMonitor: { enabled: true, labels: { release: 'kube-prometheus-stack' } },
  prometheusRule: { enabled: true, labels: { release: 'kube-prometheus-stack' } },
  dashboards: {
    enabled: true,
    namespace: 'monitoring',
    label: 'team/dashboard',
    labelValue: 'workqueues',
    folderAnnotation: 'grafana-folder',
    folder: 'Controllers',
  },
};
const MONITORING_KINDS = ['ServiceMonitor', 'PodMonitor', 'PrometheusRule'];

type Scenario = { readonly name: string; readonly mode: 'standalone' | 'prometheus'; readonly values: object };
const SCENARIOS: readonly Scenario[] = [
  { name: 'standalone', mode: 'standalone', values: STANDALONE },
  { name: 'standalone with monitoring', mode: 'standalone', values: { ...STANDALONE, ...MONITORING } },
  { name: 'prometheus', mode: 'prometheus', values: FLEET },
  { name: 'prometheus with the other monitoring', mode: 'prometheus', values: { ...FLEET, ...OTHER_MONITORING } },
];
const renders = new Map<string, Promise<KubernetesObject[]>>();
function scenarioObjects(scenario: Scenario): Promise<KubernetesObject[]> {
  let objects = renders.get(scenario.name);
  if (objects === undefined) {
    objects = rendered(scenario.values);
    renders.set(scenario.name, objects);
  }
  return objects;
}

const RBAC_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
const DASHBOARD_FILES = readdirSync(join(ROOT, 'dashboards')).filter((name) => name.endsWith('.json'));

describe('the helm chart', RENDER_TIMEOUT, () => {
  it('lints with --strict with its default values', async () => {
    const result = await runHelm(await helmV4(), ['lint', '--strict', CHART]);
    expect(result.stdout).toContain('0 chart(s) failed');
    expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    expect(result.code).toBe(0);
  });

  it('is versioned as the package, and runs the image of this version unless told otherwise', async () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as Record<string, unknown>;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'workqueue-doctor', version: VERSION, appVersion: VERSION });
    const image = (objects: KubernetesObject[]) => container(only<IDeployment>(objects, 'Deployment'), CONTAINER).image;
    expect(image(await rendered({}))).toBe(`workqueue-doctor:${VERSION}`);
    const repository = 'registry.example.com/platform/workqueue-doctor';
    expect(image(await rendered({ image: { repository, tag: 'dev' } }))).toBe(`${repository}:dev`);
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(image(await rendered({ image: { repository, digest } }))).toBe(`${repository}@${digest}`);
  });

  describe.each(SCENARIOS)('$name', (scenario) => {
    it('lints with --strict', async () => {
      const result = await helm('lint', scenario.values);
      expect(result.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
      expect(result.code).toBe(0);
    });

    it('renders objects that validate against the Kubernetes schemas, with no unknown field', async () => {
      const objects = await scenarioObjects(scenario);
      const problems = objects.flatMap((o) => schemaProblems(o).map((p) => `${describeObject(o)}: ${p}`));
      expect(problems).toEqual([]);
      for (const o of objects.filter((x) => !['ClusterRole', 'ClusterRoleBinding'].includes(x.kind))) {
        expect((o['metadata'] as { namespace?: string }).namespace, describeObject(o)).toBeDefined();
      }
    });

    it('runs one pod with the security settings, probes and resources of deploy/standalone', async () => {
      const deployment = only<IDeployment>(await scenarioObjects(scenario), 'Deployment');
      const ours = container(deployment, CONTAINER);
      const theirs = await standaloneContainer();
      expect(deployment.spec?.replicas).toBe(1);
      expect(podSpec(deployment).containers).toHaveLength(1);
      expect(podSpec(deployment).securityContext).toEqual(podSpec(theirs.deployment).securityContext);
      expect(ours.securityContext).toEqual(theirs.container.securityContext);
      expect(ours.livenessProbe).toEqual(theirs.container.livenessProbe);
      expect(ours.readinessProbe).toEqual(theirs.container.readinessProbe);
      expect(ours.resources).toEqual(theirs.container.resources);
      expect(ours.ports).toEqual(theirs.container.ports);
      expect(ours.command, "the image's entrypoint is kept").toBeUndefined();
    });

    it('mounts a configuration that serve accepts, with the source of its mode', async () => {
      const config = renderedServeConfig(await scenarioObjects(scenario));
      const http = container(only<IDeployment>(await scenarioObjects(scenario), 'Deployment'), CONTAINER).ports?.find(
        (p) => p.name === 'http',
      );
      expect(config.listen).toEqual({ host: '0.0.0.0', port: http?.containerPort });
      if (scenario.mode === 'standalone') {
        expect(config.source).toEqual({
          kind: 'kubernetes',
          namespaces: STANDALONE.config.kubernetes.namespaces,
          selector: STANDALONE.config.kubernetes.selector,
        });
      } else {
        expect(config.source).toMatchObject({ kind: 'prometheus', url: PROMETHEUS_URL });
        expect(config.scope.selector).toBeDefined();
      }
    });

    it('has a Service on port http that selects exactly the pods of the Deployment', async () => {
      const objects = await scenarioObjects(scenario);
      const deployment = only<IDeployment>(objects, 'Deployment');
      const service = only<IService>(objects, 'Service');
      expect(service.spec?.ports).toEqual([{ name: 'http', port: 9808, targetPort: 'http', protocol: 'TCP' }]);
      const selector = service.spec?.selector ?? {};
      expect(Object.keys(selector).length).toBeGreaterThan(0);
      expect(deployment.spec?.selector.matchLabels).toEqual(selector);
      expect(sameKeyAndValues(selector, deployment.spec?.template.metadata?.labels)).toBe(true);
    });

    it(
      scenario.mode === 'standalone'
        ? "grants deploy/standalone's pod discovery to its service account, and nothing else"
        : 'grants no RBAC',
      async () => {
        const objects = await scenarioObjects(scenario);
        if (scenario.mode === 'prometheus') {
          expect(objects.filter((o) => RBAC_KINDS.includes(o.kind)).map(describeObject)).toEqual([]);
          return;
        }
        const theirs = only<IClusterRole>(await kustomized('standalone'), 'ClusterRole');
        const role = only<IClusterRole>(objects, 'ClusterRole');
        expect(role.rules).toEqual(theirs.rules);
        expect(role.aggregationRule).toBeUndefined();
        const binding = only<IClusterRoleBinding>(objects, 'ClusterRoleBinding');
        expect(binding.roleRef).toEqual({
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'ClusterRole',
          name: role.metadata?.name,
        });
        const account = only<{ metadata: { name: string; namespace: string } }>(objects, 'ServiceAccount');
        expect(podSpec(only<IDeployment>(objects, 'Deployment')).serviceAccountName).toBe(account.metadata.name);
        expect(binding.subjects).toEqual([
          { kind: 'ServiceAccount', name: account.metadata.name, namespace: NAMESPACE },
        ]);
        expect(objects.filter((o) => o.kind === 'Role' || o.kind === 'RoleBinding')).toEqual([]);
      },
    );

    it('renders the monitoring objects that are enabled, and no other', async () => {
      const values = scenario.values as Record<string, { enabled?: boolean } | undefined>;
      const objects = await scenarioObjects(scenario);
      const enabled = (key: string) => values[key]?.enabled === true;
      expect(ofKind(objects, 'ServiceMonitor')).toHaveLength(enabled('serviceMonitor') ? 1 : 0);
      expect(ofKind(objects, 'PodMonitor')).toHaveLength(enabled('podMonitor') ? 1 : 0);
      expect(ofKind(objects, 'PrometheusRule')).toHaveLength(enabled('prometheusRule') ? 1 : 0);
      const dashboards = ofKind<IConfigMap>(objects, 'ConfigMap').filter(
        (m) => m.metadata?.labels?.['app.kubernetes.io/component'] === 'dashboards',
      );
      expect(dashboards).toHaveLength(enabled('dashboards') ? DASHBOARD_FILES.length : 0);
      if (!Object.keys(values).some(enabled)) {
        expect(objects.filter((o) => MONITORING_KINDS.includes(o.kind))).toEqual([]);
      }
    });
  });
});

describe('the helm chart: rules and dashboards', RENDER_TIMEOUT, () => {
  it('PrometheusRule: exactly the groups of the generated rule file, alerts templates untouched', async () => {
    const rule = only<IPrometheusRule>(await scenarioObjects(SCENARIOS[1]!), 'PrometheusRule');
    const ruleFile = readFileSync(join(ROOT, OUTPUT.alertRules), 'utf8');
    expect(rule.spec).toEqual(parse(ruleFile));
    expect(JSON.stringify(rule.spec)).toContain('{{ $labels.name }}');
    expect(rule.metadata?.labels?.['app.kubernetes.io/component']).toBe('alert-rules');
  });

  it("PrometheusRule: prometheusRule.ruleFile replaces the bundled rules with the configuration's", async () => {
    const overrides = { rules: { WorkqueueBacklog: { thresholds: { minDepth: 321 } } } };
    const ruleFile = generateArtifacts({ overrides }).find((f) => f.path === OUTPUT.alertRules)?.content ?? '';
    expect(ruleFile).toContain('321');
    const path = writeWorkFile(ruleFile);
    const objects = await rendered({ prometheusRule: { enabled: true } }, [
      '--set-file',
      `prometheusRule.ruleFile=${path}`,
    ]);
    expect(only<IPrometheusRule>(objects, 'PrometheusRule').spec).toEqual(parse(ruleFile));
  });

  it.each(DASHBOARD_FILES)('%s: a ConfigMap holding exactly the dashboard, labelled for the sidecar', async (file) => {
    const json = readFileSync(join(ROOT, 'dashboards', file), 'utf8');
    const byDefault = ofKind<IConfigMap>(await scenarioObjects(SCENARIOS[1]!), 'ConfigMap').find(
      (m) => m.data?.[file] !== undefined,
    );
    expect(byDefault?.data).toEqual({ [file]: json });
    expect(byDefault?.metadata?.namespace).toBe(NAMESPACE);
    expect(byDefault?.metadata?.labels?.['grafana_dashboard']).toBe('1');
    expect(byDefault?.metadata?.annotations).toEqual({ grafana_folder: 'Workqueue Doctor' });
    // The same label and folder as deploy/monitoring's ConfigMaps.
    const kustomizeMap = ofKind<IConfigMap>(await kustomized('monitoring'), 'ConfigMap').find(
      (m) => m.data?.[file] !== undefined,
    );
    expect(kustomizeMap?.data).toEqual({ [file]: json });
    expect(kustomizeMap?.metadata?.annotations).toEqual(byDefault?.metadata?.annotations);

    const custom = ofKind<IConfigMap>(await scenarioObjects(SCENARIOS[3]!), 'ConfigMap').find(
      (m) => m.data?.[file] !== undefined,
    );
    expect(custom?.data).toEqual({ [file]: json });
    expect(custom?.metadata?.namespace).toBe('monitoring');
    expect(custom?.metadata?.labels?.['team/dashboard']).toBe('workqueues');
    expect(custom?.metadata?.labels?.['grafana_dashboard']).toBeUndefined();
    expect(custom?.metadata?.annotations).toEqual({ 'grafana-folder': 'Controllers' });
  });

  it("dashboards.json replaces a bundled dashboard with the configuration's", async () => {
    const replacement = `${JSON.stringify({ uid: 'workqueue-doctor-detail', title: 'regenerated' }, null, 2)}\n`;
    const path = writeWorkFile(replacement, 'json');
    const objects = await rendered({ dashboards: { enabled: true } }, [
      '--set-file',
      `dashboards.json.workqueue-doctor-detail=${path}`,
    ]);
    const data = Object.assign({}, ...ofKind<IConfigMap>(objects, 'ConfigMap').map((m) => m.data)) as Record<
      string,
      string
    >;
    expect(data['workqueue-doctor-detail.json']).toBe(replacement);
    expect(data['workqueue-doctor-overview.json']).toBe(
      readFileSync(join(ROOT, 'dashboards/workqueue-doctor-overview.json'), 'utf8'),
    );
  });

  it("ServiceMonitor: deploy/monitoring's endpoint, selecting the release's Service", async () => {
    const objects = await scenarioObjects(SCENARIOS[1]!);
    const monitor = only<IServiceMonitor>(objects, 'ServiceMonitor');
    const theirs = only<IServiceMonitor>(await kustomized('monitoring'), 'ServiceMonitor');
    expect(monitor.spec.endpoints).toEqual(theirs.spec.endpoints);
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [NAMESPACE] });
    const service = only<IService>(objects, 'Service');
    expect(sameKeyAndValues(monitor.spec.selector.matchLabels ?? {}, service.metadata?.labels)).toBe(true);
  });

  it("PodMonitor: the same endpoint on the release's pods, with the labels given", async () => {
    const objects = await scenarioObjects(SCENARIOS[3]!);
    const monitor = only<IPodMonitor>(objects, 'PodMonitor');
    const theirs = only<IServiceMonitor>(await kustomized('monitoring'), 'ServiceMonitor');
    expect(monitor.spec.podMetricsEndpoints).toEqual(theirs.spec.endpoints);
    expect(monitor.metadata?.labels?.['release']).toBe('kube-prometheus-stack');
    const pod = only<IDeployment>(objects, 'Deployment').spec?.template.metadata?.labels;
    expect(sameKeyAndValues(monitor.spec.selector.matchLabels ?? {}, pod)).toBe(true);
  });
});

describe('the helm chart: RBAC, secrets and state', RENDER_TIMEOUT, () => {
  it('rbac.namespaced: a Role and RoleBinding with the same rule in each watched namespace, no ClusterRole', async () => {
    const namespaces = ['team-a', 'team-b'];
    const objects = await rendered({ config: { kubernetes: { namespaces } }, rbac: { namespaced: true } });
    const theirs = only<IClusterRole>(await kustomized('standalone'), 'ClusterRole');
    const roles = ofKind<IRole>(objects, 'Role');
    expect(roles.map((r) => r.metadata?.namespace)).toEqual(namespaces);
    for (const role of roles) expect(role.rules).toEqual(theirs.rules);
    const bindings = ofKind<IRoleBinding>(objects, 'RoleBinding');
    expect(bindings.map((b) => [b.metadata?.namespace, b.roleRef.name, b.subjects?.[0]?.namespace])).toEqual(
      roles.map((r) => [r.metadata?.namespace, r.metadata?.name, NAMESPACE]),
    );
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    expect(renderedServeConfig(objects).source).toMatchObject({ kind: 'kubernetes', namespaces });
  });

  it("rbac.metricsReader: deploy/sidecar/secure's /metrics reader for the service account", async () => {
    const objects = await rendered({ rbac: { metricsReader: true } });
    const theirs = ofKind<IClusterRole>(await kustomized('sidecar/secure'), 'ClusterRole').find(
      (r) => r.metadata?.name === 'workqueue-doctor-metrics-reader',
    );
    const reader = ofKind<IClusterRole>(objects, 'ClusterRole').find((r) => r.rules?.[0]?.nonResourceURLs);
    expect(reader?.rules).toEqual(theirs?.rules);
    const binding = ofKind<IClusterRoleBinding>(objects, 'ClusterRoleBinding').find(
      (b) => b.roleRef.name === reader?.metadata?.name,
    );
    const account = only<{ metadata: { name: string } }>(objects, 'ServiceAccount');
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name, namespace: NAMESPACE }]);
  });

  it('secretMounts: an existing Secret mounted read-only where the configuration reads its file', async () => {
    const objects = await rendered({
      ...FLEET,
      config: {
        ...FLEET.config,
        prometheus: {
          url: PROMETHEUS_URL,
          basicAuth: { username: 'workqueue-doctor', passwordFile: '/var/run/secrets/prometheus/password' },
        },
      },
      secretMounts: [
        { name: 'prometheus-auth', secretName: 'prometheus-basic-auth', mountPath: '/var/run/secrets/prometheus' },
      ],
    });
    const deployment = only<IDeployment>(objects, 'Deployment');
    const mount = container(deployment, CONTAINER).volumeMounts?.find((m) => m.name === 'prometheus-auth');
    expect(mount).toEqual({ name: 'prometheus-auth', mountPath: '/var/run/secrets/prometheus', readOnly: true });
    const volume = podSpec(deployment).volumes?.find((v) => v.name === 'prometheus-auth');
    expect(volume?.secret).toEqual({ secretName: 'prometheus-basic-auth' });
    const source = renderedServeConfig(objects).source;
    expect(source).toMatchObject({ kind: 'prometheus' });
    const passwordFile = source.kind === 'prometheus' ? source.basicAuth?.passwordFile : undefined;
    expect(passwordFile?.startsWith(`${mount?.mountPath}/`)).toBe(true);
    expect(ofKind(objects, 'Secret')).toEqual([]);
  });

  it('config.state.dir: a writable volume there, an emptyDir by default, Recreate with a claim', async () => {
    const dir = '/var/lib/workqueue-doctor';
    const volumeAt = (objects: KubernetesObject[]) => {
      const deployment = only<IDeployment>(objects, 'Deployment');
      const mount = container(deployment, CONTAINER).volumeMounts?.find((m) => m.mountPath === dir);
      expect(mount?.readOnly ?? false).toBe(false);
      return { deployment, volume: podSpec(deployment).volumes?.find((v) => v.name === mount?.name) };
    };
    const withEmptyDir = await rendered({ config: { ...STANDALONE.config, state: { dir } } });
    expect(volumeAt(withEmptyDir).volume).toEqual({ name: 'state', emptyDir: {} });
    expect(volumeAt(withEmptyDir).deployment.spec?.strategy).toBeUndefined();
    expect(renderedServeConfig(withEmptyDir).stateDir).toBe(dir);
    const claim = { claimName: 'workqueue-doctor-state' };
    const withClaim = await rendered({
      config: { ...STANDALONE.config, state: { dir } },
      stateVolume: { persistentVolumeClaim: claim },
    });
    expect(volumeAt(withClaim).volume).toEqual({ name: 'state', persistentVolumeClaim: claim });
    expect(volumeAt(withClaim).deployment.spec?.strategy).toEqual({ type: 'Recreate' });
  });
});

describe('the helm chart refuses bad values, naming them', RENDER_TIMEOUT, () => {
  const url = PROMETHEUS_URL;
  it.each<[string, object, RegExp]>([
    ['an unknown mode', { mode: 'nonsense' }, /at '\/mode': value must be one of 'standalone', 'prometheus'/],
    [
      'a configuration key of the wrong type',
      { config: { scrape: { interval: 15 } } },
      /at '\/config\/scrape\/interval': got number, want null or string/,
    ],
    [
      'a duration that is not one',
      { config: { scrape: { interval: '5x' } } },
      /at '\/config\/scrape\/interval': '5x' does not match pattern/,
    ],
    [
      'an unknown configuration key',
      { config: { scrape: { intervall: '15s' } } },
      /at '\/config\/scrape': additional properties 'intervall' not allowed/,
    ],
    [
      'a threshold outside its range',
      { config: { rules: { WorkqueueBacklog: { thresholds: { minDepth: -1 } } } } },
      /at '\/config\/rules\/WorkqueueBacklog\/thresholds\/minDepth': minimum: got -1, want 0/,
    ],
    [
      'an unknown rule',
      { config: { rules: { WorkqueueBackog: { disabled: true } } } },
      /at '\/config\/rules': additional properties 'WorkqueueBackog' not allowed/,
    ],
    ['a queue entry matching every queue', { config: { queues: [{ silenced: true }] } }, /missing property 'name'/],
    ['a key the chart sets', { config: { listen: '0.0.0.0:1' } }, /additional properties 'listen' not allowed/],
    ['an unknown value', { replicas: 2 }, /additional properties 'replicas' not allowed/],
    ['prometheus mode without a URL', { mode: 'prometheus' }, /mode prometheus .*: set config\.prometheus\.url/],
    [
      'standalone mode with a Prometheus URL',
      { config: { prometheus: { url } } },
      /config\.prometheus\.url is read in mode prometheus only/,
    ],
    [
      'RBAC options of pod discovery in prometheus mode',
      { ...FLEET, rbac: { metricsReader: true } },
      /rbac\.metricsReader applies to mode standalone/,
    ],
    [
      'namespaced RBAC without namespaces',
      { rbac: { namespaced: true } },
      /rbac\.namespaced .*: list them in config\.kubernetes\.namespaces/,
    ],
    [
      'both a ServiceMonitor and a PodMonitor',
      { serviceMonitor: { enabled: true }, podMonitor: { enabled: true } },
      /enable serviceMonitor or podMonitor, not both/,
    ],
    [
      'a secret mount named like a volume of the chart',
      { secretMounts: [{ name: 'config', secretName: 's', mountPath: '/s' }] },
      /secretMounts\[0\]\.name: "config" is the name of a volume of the chart/,
    ],
    [
      'a rule file that is not one',
      { prometheusRule: { enabled: true, ruleFile: 'nonsense: true\n' } },
      /prometheusRule\.ruleFile: not a Prometheus rule file/,
    ],
  ])('%s', async (_what, values, message) => {
    const result = await helm('template', values);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });
});

describe("the helm chart's README: the sidecar", RENDER_TIMEOUT, () => {
  it("its patch adds deploy/sidecar/plain's container (the image aside) to a controller's Deployment", async () => {
    const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
    const block = new RegExp(`${SIDECAR_PATCH_HEADING}\\n\\n\`\`\`yaml\\n([\\s\\S]*?)\\n\`\`\``).exec(readme);
    expect(block, 'the patch under its heading').not.toBeNull();
    const patch = writeWorkFile(block![1]!);
    const plain = await kustomized('sidecar/plain');
    const controller = only<IDeployment>(plain, 'Deployment');
    const base = structuredClone(controller);
    base.spec!.template.spec!.containers = base.spec!.template.spec!.containers.filter((c) => c.name !== CONTAINER);
    const { stdout } = await exec(
      await kubectlV5(),
      [
        'patch',
        '--local',
        '-f',
        writeWorkFile(stringify(base)),
        '--type',
        'strategic',
        '--patch-file',
        patch,
        '-o',
        'yaml',
      ],
      { timeout: 60_000 },
    );
    const patched = parse(stdout) as IDeployment;
    const { image: readmeImage, ...added } = container(patched, CONTAINER);
    const { image: _kustomizeImage, ...expected } = container(controller, CONTAINER);
    expect(added).toEqual(expected);
    expect(readmeImage).toMatch(new RegExp(`^registry\\.example\\.com/.+:${VERSION.replaceAll('.', '\\.')}$`));
    // The controller's own container and pod settings are left as they were.
    expect(podSpec(patched).containers.find((c) => c.name === 'manager')).toEqual(
      podSpec(controller).containers.find((c) => c.name === 'manager'),
    );
    expect(podSpec(patched).securityContext).toEqual(podSpec(controller).securityContext);
  });

  it('says what its readiness means for a controller serving webhooks, and what to do', () => {
    const readme = readFileSync(join(CHART, 'README.md'), 'utf8');
    expect(readme).toMatch(/readiness counts toward the pod's/);
    expect(readme).toMatch(/webhooks/);
    expect(readme).toMatch(/remove\s+its `readinessProbe`|point it at \/healthz/);
  });
});
