/**
 * deploy/: every kustomization renders with kustomize v5 (kubectl 1.33) without a deprecation warning and
 * uses no deprecated field; every
 * rendered object validates against the Kubernetes (and Prometheus Operator) schemas with no unknown field;
 * every container runs locked down, probed and sized; and each deployment mode is wired as documented
 * (sidecar plain and secure, its PodMonitor and ServiceMonitor, standalone with pod discovery, the
 * ServiceMonitor).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IPodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import type { IServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import type { IClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import type { IService } from 'kubernetes-models/v1/Service';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubectlV5, kustomize } from './kubectl.js';
import { describeObject, type KubernetesObject, schemaProblems, unknownFields } from './kubernetes-schema.js';
import { container, ofKind, only, parseObjects, podSpec, sameKeyAndValues } from './rendered-objects.js';
import { flag, hasFlag, serveConfig } from './serve-arguments.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** The image's name in the manifests: local, as `docker build -t workqueue-doctor:<version>` tags it (docs/install.md). */
const IMAGE = 'workqueue-doctor';
const SERVICE_PORT = 9808;
const UID = 65532;
/** The kustomization fields these manifests may use: current kustomize v5 fields, none of the deprecated ones. */
const V5_FIELDS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'patches',
  'labels',
  'namespace',
  'images',
  'configMapGenerator',
]);
/** Fields kustomize v5 still reads but deprecates (it warns on stderr). */
const DEPRECATED_FIELDS = ['bases', 'patchesStrategicMerge', 'patchesJson6902', 'commonLabels', 'vars', 'imageTags'];

/** Directories under deploy/ holding a kustomization.yaml, relative to deploy/, sorted. */
function kustomizationDirs(dir = DEPLOY): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) found.push(...kustomizationDirs(join(dir, entry.name)));
    else if (entry.name === 'kustomization.yaml') found.push(relative(DEPLOY, dir));
  }
  return found.sort();
}

const DIRS = kustomizationDirs();
/** Rendering may first fetch and extract kubectl 1.33. */
const RENDER_TIMEOUT = { timeout: 240_000 };
const renders = new Map<string, Promise<KubernetesObject[]>>();

const warnings = new Map<string, string>();

/** `kubectl kustomize` of a directory under deploy/, parsed; fails (never skips) when kubectl 1.33 is missing. */
function rendered(dir: string): Promise<KubernetesObject[]> {
  let objects = renders.get(dir);
  if (objects === undefined) {
    objects = kubectlV5()
      .then((kubectl) => kustomize(kubectl, join(DEPLOY, dir)))
      .then(({ yaml, warnings: warned }) => {
        warnings.set(dir, warned);
        return yaml;
      })
      .then((text) => parseObjects(text, dir));
    renders.set(dir, objects);
  }
  return objects;
}

/** A probe's or port's port as a number, resolving a named container port. */
function portNumber(c: IContainer, port: number | string | undefined): number | undefined {
  if (typeof port === 'number') return port;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

/** The security settings that hold for a container: its own, else the pod's where the pod may set them. */
function checkLockedDown(where: string, pod: IPodSpec, c: IContainer): void {
  const own = c.securityContext ?? {};
  const podLevel = pod.securityContext ?? {};
  expect(own.runAsNonRoot ?? podLevel.runAsNonRoot, `${where}: runAsNonRoot`).toBe(true);
  expect(own.runAsUser ?? podLevel.runAsUser, `${where}: runAsUser`).toBe(UID);
  expect(own.readOnlyRootFilesystem, `${where}: readOnlyRootFilesystem`).toBe(true);
  expect(own.allowPrivilegeEscalation, `${where}: allowPrivilegeEscalation`).toBe(false);
  expect(own.privileged ?? false, `${where}: privileged`).toBe(false);
  expect(own.capabilities?.drop, `${where}: capabilities.drop`).toContain('ALL');
  expect(own.capabilities?.add ?? [], `${where}: capabilities.add`).toEqual([]);
  expect((own.seccompProfile ?? podLevel.seccompProfile)?.type, `${where}: seccompProfile`).toBe('RuntimeDefault');
}

function checkProbedAndSized(where: string, c: IContainer): void {
  expect(c.livenessProbe, `${where}: livenessProbe`).toBeDefined();
  expect(c.readinessProbe, `${where}: readinessProbe`).toBeDefined();
  expect(c.resources?.requests?.['cpu'], `${where}: requests.cpu`).toBeDefined();
  expect(c.resources?.requests?.['memory'], `${where}: requests.memory`).toBeDefined();
  expect(c.resources?.limits?.['memory'], `${where}: limits.memory`).toBeDefined();
}

/** Our container: the released image, `serve`, port 9808, /healthz and /readyz probes on it. */
function checkServiceContainer(where: string, c: IContainer): string[] {
  expect(c.image, `${where}: image`).toBe(`${IMAGE}:${VERSION}`);
  const args = c.args ?? [];
  expect(c.command, `${where}: the image's entrypoint is kept`).toBeUndefined();
  expect(args[0], `${where}: subcommand`).toBe('serve');
  expect(flag(args, '--listen'), `${where}: --listen`).toBe(`0.0.0.0:${SERVICE_PORT}`);
  expect(c.ports?.map((p) => p.containerPort)).toContain(SERVICE_PORT);
  expect(c.livenessProbe?.httpGet?.path, `${where}: liveness path`).toBe('/healthz');
  expect(portNumber(c, c.livenessProbe?.httpGet?.port), `${where}: liveness port`).toBe(SERVICE_PORT);
  expect(c.readinessProbe?.httpGet?.path, `${where}: readiness path`).toBe('/readyz');
  expect(portNumber(c, c.readinessProbe?.httpGet?.port), `${where}: readiness port`).toBe(SERVICE_PORT);
  return args;
}

function memoryMiB(quantity: string | number | undefined): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(String(quantity));
  expect(match, `memory quantity ${quantity}`).not.toBeNull();
  return Number(match![1]) * (match![2] === 'Gi' ? 1024 : 1);
}

describe('deploy/ kustomizations', RENDER_TIMEOUT, () => {
  it('are the sidecar variants and their monitors, the standalone service and the generated monitoring', () => {
    expect(DIRS).toEqual(
      expect.arrayContaining([
        'sidecar/plain',
        'sidecar/secure',
        'sidecar/monitoring/podmonitor',
        'sidecar/monitoring/servicemonitor',
        'standalone',
        'monitoring',
      ]),
    );
  });

  describe.each(DIRS)('%s', (dir) => {
    it('uses current kustomize v5 fields only, none deprecated', () => {
      const kustomization = parse(readFileSync(join(DEPLOY, dir, 'kustomization.yaml'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(kustomization['apiVersion']).toBe('kustomize.config.k8s.io/v1beta1');
      expect(kustomization['kind']).toBe('Kustomization');
      expect(Object.keys(kustomization).filter((key) => !V5_FIELDS.has(key))).toEqual([]);
      expect(Object.keys(kustomization).filter((key) => DEPRECATED_FIELDS.includes(key))).toEqual([]);
    });

    it('renders with kustomize v5 without a warning; every object validates, with no unknown field', async () => {
      const objects = await rendered(dir);
      expect(warnings.get(dir), `${dir}: kustomize warnings`).toBe('');
      expect(objects.length).toBeGreaterThan(0);
      const problems = objects.flatMap((o) => schemaProblems(o).map((p) => `${describeObject(o)}: ${p}`));
      expect(problems).toEqual([]);
    });

    it('runs every container locked down, probed and with resources', async () => {
      for (const deployment of ofKind<IDeployment>(await rendered(dir), 'Deployment')) {
        const pod = podSpec(deployment);
        expect(pod.hostNetwork ?? false).toBe(false);
        expect(pod.hostPID ?? false).toBe(false);
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          const where = `${dir}: ${deployment.metadata?.name}/${c.name}`;
          checkLockedDown(where, pod, c);
          checkProbedAndSized(where, c);
        }
      }
    });

    it('pins the image of this release, overridable through `images:`', async () => {
      const kustomization = parse(readFileSync(join(DEPLOY, dir, 'kustomization.yaml'), 'utf8')) as {
        images?: Array<{ name: string; newTag?: string }>;
      };
      const ours = (kustomization.images ?? []).filter((i) => i.name === IMAGE);
      const containers = ofKind<IDeployment>(await rendered(dir), 'Deployment').flatMap((d) => podSpec(d).containers);
      const usesImage = containers.some((c) => c.image?.startsWith(`${IMAGE}:`));
      expect(ours.map((i) => i.newTag)).toEqual(usesImage ? [VERSION] : []);
    });
  });
});

describe('deploy/sidecar', RENDER_TIMEOUT, () => {
  it.each([
    ['plain', 'http://127.0.0.1:8080/metrics'],
    ['secure', 'https://127.0.0.1:8443/metrics'],
  ])('%s: adds the container to the example controller, which keeps its own', async (variant, target) => {
    const objects = await rendered(`sidecar/${variant}`);
    const deployment = only<IDeployment>(objects, 'Deployment');
    expect(deployment.metadata?.name).toBe('example-controller');
    expect(
      podSpec(deployment)
        .containers.map((c) => c.name)
        .sort(),
    ).toEqual(['manager', 'workqueue-doctor']);
    const args = checkServiceContainer(`sidecar/${variant}`, container(deployment, 'workqueue-doctor'));
    expect(flag(args, '--target')).toBe(target);
    const config = serveConfig(args);
    expect(config.source).toEqual({ kind: 'targets', urls: [target] });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: SERVICE_PORT });
    expect(config.scrape.insecureSkipVerify).toBe(variant === 'secure');
    // The patch touches nothing at the pod level: the user's pod settings stay theirs.
    const patch = parse(readFileSync(join(DEPLOY, 'sidecar', variant, 'sidecar-patch.yaml'), 'utf8')) as IDeployment;
    expect(Object.keys(patch.spec ?? {})).toEqual(['template']);
    expect(Object.keys(patch.spec?.template ?? {})).toEqual(['spec']);
    expect(Object.keys(patch.spec?.template.spec ?? {})).toEqual(['containers']);
    expect(patch.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['workqueue-doctor']);
    const resources = container(deployment, 'workqueue-doctor').resources;
    expect(memoryMiB(resources?.requests?.['memory'])).toBeGreaterThanOrEqual(96);
    expect(memoryMiB(resources?.limits?.['memory'])).toBeGreaterThanOrEqual(2 * 96);
    expect(resources?.limits?.['cpu']).toBeUndefined();
  });

  it('plain: no token, no TLS options, no extra RBAC', async () => {
    const objects = await rendered('sidecar/plain');
    const args = container(only<IDeployment>(objects, 'Deployment'), 'workqueue-doctor').args ?? [];
    for (const name of ['--bearer-token-file', '--insecure-skip-verify', '--ca-file']) {
      expect(hasFlag(args, name), name).toBe(false);
    }
    expect(objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'ServiceAccount']);
  });

  it("secure: the pod's service-account token, and RBAC letting that account get /metrics", async () => {
    const objects = await rendered('sidecar/secure');
    const deployment = only<IDeployment>(objects, 'Deployment');
    const args = container(deployment, 'workqueue-doctor').args ?? [];
    expect(flag(args, '--bearer-token-file')).toBe('/var/run/secrets/kubernetes.io/serviceaccount/token');
    expect(serveConfig(args).scrape.bearerTokenFile).toBe('/var/run/secrets/kubernetes.io/serviceaccount/token');
    expect(hasFlag(args, '--insecure-skip-verify') || hasFlag(args, '--ca-file')).toBe(true);
    expect(podSpec(deployment).automountServiceAccountToken ?? true).toBe(true);

    const reader = ofKind<IClusterRole>(objects, 'ClusterRole').find(
      (r) => r.metadata?.name === 'workqueue-doctor-metrics-reader',
    );
    expect(reader?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const binding = ofKind<IClusterRoleBinding>(objects, 'ClusterRoleBinding').find(
      (b) => b.roleRef.name === 'workqueue-doctor-metrics-reader',
    );
    expect(binding?.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'workqueue-doctor-metrics-reader',
    });
    expect(binding?.subjects).toEqual([
      {
        kind: 'ServiceAccount',
        name: podSpec(deployment).serviceAccountName,
        namespace: deployment.metadata?.namespace,
      },
    ]);
  });
});

describe("deploy/sidecar/monitoring: the sidecar's own /metrics for the Prometheus Operator", RENDER_TIMEOUT, () => {
  /** The example controller's pod labels and the sidecar's metrics port, as the sidecar overlays render them. */
  async function sidecarPod(variant: string): Promise<{ labels: Record<string, string>; namespace?: string }> {
    const deployment = only<IDeployment>(await rendered(`sidecar/${variant}`), 'Deployment');
    const c = container(deployment, 'workqueue-doctor');
    expect(c.ports?.find((p) => p.name === 'wqd-http')?.containerPort).toBe(SERVICE_PORT);
    return {
      labels: (deployment.spec?.template.metadata?.labels ?? {}) as Record<string, string>,
      ...(deployment.metadata?.namespace !== undefined ? { namespace: deployment.metadata.namespace } : {}),
    };
  }

  it.each(['plain', 'secure'])("PodMonitor: /metrics on port wqd-http of the %s sidecar's pods", async (variant) => {
    const pod = await sidecarPod(variant);
    const monitor = only<IPodMonitor>(await rendered('sidecar/monitoring/podmonitor'), 'PodMonitor');
    expect(monitor.metadata?.namespace).toBe(pod.namespace);
    const matchLabels = monitor.spec.selector.matchLabels ?? {};
    expect(Object.keys(matchLabels).length).toBeGreaterThan(0);
    expect(sameKeyAndValues(matchLabels, pod.labels)).toBe(true);
    expect(monitor.spec.podMetricsEndpoints).toEqual([
      { port: 'wqd-http', path: '/metrics', interval: '30s', scheme: 'http' },
    ]);
  });

  it.each(['plain', 'secure'])("ServiceMonitor: a headless Service over the %s sidecar's pods", async (variant) => {
    const pod = await sidecarPod(variant);
    const objects = await rendered('sidecar/monitoring/servicemonitor');
    const service = only<IService>(objects, 'Service');
    const monitor = only<IServiceMonitor>(objects, 'ServiceMonitor');
    expect(service.metadata?.namespace).toBe(pod.namespace);
    expect(service.spec?.clusterIP).toBe('None');
    expect(sameKeyAndValues(service.spec?.selector ?? {}, pod.labels)).toBe(true);
    expect(service.spec?.ports).toEqual([
      { name: 'wqd-http', port: SERVICE_PORT, targetPort: 'wqd-http', protocol: 'TCP' },
    ]);
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [pod.namespace] });
    const matchLabels = monitor.spec.selector.matchLabels ?? {};
    expect(sameKeyAndValues(matchLabels, service.metadata?.labels as Record<string, string>)).toBe(true);
    // Not the standalone service's ServiceMonitor selector: the two monitors never pick each other's Service.
    const standaloneMonitor = only<IServiceMonitor>(await rendered('monitoring'), 'ServiceMonitor');
    expect(
      sameKeyAndValues(
        standaloneMonitor.spec.selector.matchLabels ?? {},
        service.metadata?.labels as Record<string, string>,
      ),
    ).toBe(false);
    expect(monitor.spec.endpoints).toEqual([{ port: 'wqd-http', path: '/metrics', interval: '30s', scheme: 'http' }]);
  });
});

describe('deploy/standalone', RENDER_TIMEOUT, () => {
  it('one replica discovering pods through the API, with read-only access to pods and nothing else', async () => {
    const objects = await rendered('standalone');
    const deployment = only<IDeployment>(objects, 'Deployment');
    expect(deployment.spec?.replicas).toBe(1);
    const args = checkServiceContainer('standalone', container(deployment, 'workqueue-doctor'));
    expect(hasFlag(args, '--kubernetes')).toBe(true);
    expect(flag(args, '--namespace')).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    // A label selector: one or more key=value (or key!=value, key in (...)) requirements.
    expect(flag(args, '--selector')).toMatch(/^[A-Za-z0-9./_-]+\s*(=|==|!=|\s+in\s|\s+notin\s)/);

    const account = only<{ metadata: { name: string; namespace: string } }>(objects, 'ServiceAccount');
    expect(podSpec(deployment).serviceAccountName).toBe(account.metadata.name);
    const role = only<IClusterRole>(objects, 'ClusterRole');
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }]);
    expect(role.aggregationRule).toBeUndefined();
    const binding = only<IClusterRoleBinding>(objects, 'ClusterRoleBinding');
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: role.metadata?.name,
    });
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: account.metadata.name, namespace: account.metadata.namespace },
    ]);
    expect(objects.filter((o) => o.kind === 'Role' || o.kind === 'RoleBinding')).toEqual([]);
  });

  it('mounts the generated ConfigMap where --config reads it; serve accepts the arguments and the file', async () => {
    const objects = await rendered('standalone');
    const deployment = only<IDeployment>(objects, 'Deployment');
    const c = container(deployment, 'workqueue-doctor');
    const configPath = flag(c.args ?? [], '--config');
    expect(configPath).toBeDefined();
    const mount = c.volumeMounts?.find((m) => configPath!.startsWith(`${m.mountPath}/`));
    expect(mount, 'a volume mounted at the config directory').toBeDefined();
    expect(mount?.readOnly).toBe(true);
    const volume = podSpec(deployment).volumes?.find((v) => v.name === mount?.name);
    const configMap = only<IConfigMap>(objects, 'ConfigMap');
    // configMapGenerator adds a content hash to the name and rewrites the reference to match.
    expect(configMap.metadata?.name).toMatch(/^workqueue-doctor-config-[a-z0-9]+$/);
    expect(volume?.configMap?.name).toBe(configMap.metadata?.name);
    const key = configPath!.slice(mount!.mountPath.length + 1);
    const text = configMap.data?.[key];
    expect(text, `ConfigMap key ${key}`).toBeDefined();
    const config = serveConfig(c.args ?? [], new Map([[configPath!, text!]]));
    expect(config.configFile).toBe(configPath);
    expect(config.source).toMatchObject({ kind: 'kubernetes', namespaces: [flag(c.args ?? [], '--namespace')] });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: SERVICE_PORT });
  });

  it('a Service on port 9808 named http selects exactly the pods of the Deployment', async () => {
    const objects = await rendered('standalone');
    const deployment = only<IDeployment>(objects, 'Deployment');
    const service = only<IService>(objects, 'Service');
    expect(service.metadata?.namespace).toBe(deployment.metadata?.namespace);
    const port = service.spec?.ports?.find((p) => p.name === 'http');
    expect(port?.port).toBe(SERVICE_PORT);
    expect(portNumber(container(deployment, 'workqueue-doctor'), port?.targetPort)).toBe(SERVICE_PORT);
    const selector = service.spec?.selector ?? {};
    expect(Object.keys(selector).length).toBeGreaterThan(0);
    expect(sameKeyAndValues(selector, deployment.spec?.template.metadata?.labels)).toBe(true);
    expect(deployment.spec?.selector.matchLabels).toEqual(selector);
  });

  it('creates its namespace with the restricted Pod Security profile enforced', async () => {
    const objects = await rendered('standalone');
    const namespace = only<{ metadata: { name: string; labels?: Record<string, string> } }>(objects, 'Namespace');
    expect(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    for (const o of objects.filter((x) => !['Namespace', 'ClusterRole', 'ClusterRoleBinding'].includes(x.kind))) {
      expect((o['metadata'] as { namespace?: string }).namespace, describeObject(o)).toBe(namespace.metadata.name);
    }
  });
});

describe('deploy/monitoring ServiceMonitor', RENDER_TIMEOUT, () => {
  it("scrapes the standalone Service's /metrics every 30 s on its http port", async () => {
    const monitor = only<IServiceMonitor>(await rendered('monitoring'), 'ServiceMonitor');
    const standalone = await rendered('standalone');
    const service = only<IService>(standalone, 'Service');
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [service.metadata?.namespace] });
    const matchLabels = monitor.spec.selector.matchLabels ?? {};
    expect(Object.keys(matchLabels).length).toBeGreaterThan(0);
    expect(sameKeyAndValues(matchLabels, service.metadata?.labels)).toBe(true);
    // Selects no other object of the standalone install that could be a Service.
    expect(standalone.filter((o) => o.kind === 'Service')).toHaveLength(1);
    expect(monitor.spec.endpoints).toEqual([{ port: 'http', path: '/metrics', interval: '30s', scheme: 'http' }]);
    expect(service.spec?.ports?.map((p) => p.name)).toContain('http');
  });
});

describe('the strict schema check', () => {
  const deployment = (): KubernetesObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x', labels: { 'any/label': 'v' }, annotations: { 'any.annotation': 'v' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'x' } },
      template: {
        metadata: { labels: { app: 'x' } },
        spec: {
          containers: [
            {
              name: 'c',
              image: 'i',
              resources: { requests: { cpu: '20m', memory: '96Mi' }, limits: { memory: '192Mi' } },
              securityContext: { capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
            },
          ],
        },
      },
    },
  });

  function containerOf(object: KubernetesObject): Record<string, unknown> {
    const spec = object['spec'] as { template: { spec: { containers: Array<Record<string, unknown>> } } };
    return spec.template.spec.containers[0]!;
  }

  it('accepts a valid object, including free keys in maps (labels, annotations, resource quantities)', () => {
    expect(schemaProblems(deployment())).toEqual([]);
    expect(
      schemaProblems({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { 'any-key.yaml': 'x' } }),
    ).toEqual([]);
  });

  it('rejects an unknown field at the top, nested in objects and inside list items', () => {
    const object = deployment();
    object['extra'] = true;
    (object['spec'] as Record<string, unknown>)['replica'] = 2;
    const c = containerOf(object);
    (c['securityContext'] as Record<string, unknown>)['runAsUserr'] = 65532;
    c['livenesProbe'] = { httpGet: { path: '/healthz', port: 9808 } };
    expect(unknownFields(object).sort()).toEqual([
      '/extra',
      '/spec/replica',
      '/spec/template/spec/containers/0/livenesProbe',
      '/spec/template/spec/containers/0/securityContext/runAsUserr',
    ]);
    expect(schemaProblems(object)).toContain('unknown field /spec/replica');
  });

  it('rejects unknown fields in Prometheus Operator objects', () => {
    const monitor: KubernetesObject = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'm' },
      spec: { selector: { matchLabels: { a: 'b' } }, endpoints: [{ port: 'http', intervall: '30s' }] },
    };
    expect(unknownFields(monitor)).toEqual(['/spec/endpoints/0/intervall']);
  });

  it('rejects a missing required field and a wrong type', () => {
    const noSelector = deployment();
    delete (noSelector['spec'] as Record<string, unknown>)['selector'];
    expect(schemaProblems(noSelector).join('\n')).toMatch(/spec must have required property '?selector'?/);
    const badReplicas = deployment();
    (badReplicas['spec'] as Record<string, unknown>)['replicas'] = '1';
    expect(schemaProblems(badReplicas).join('\n')).toMatch(/spec\/replicas must be integer/);
    const noContainerName = deployment();
    delete containerOf(noContainerName)['name'];
    expect(schemaProblems(noContainerName).join('\n')).toMatch(/must have required property '?name'?/);
  });

  it('fails on a kind it has no schema for', () => {
    expect(() => schemaProblems({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } })).toThrow(
      /no schema mapped for apiVersion v1, kind Secret/,
    );
  });
});
