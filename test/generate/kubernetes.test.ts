/**
 * deploy/monitoring: the PrometheusRule holds exactly the alert rules, each dashboard ConfigMap holds exactly
 * the dashboard JSON with the sidecar's label, both validate against the Kubernetes schemas, the
 * kustomization lists every resource, and the Grafana provisioning example points a file provider at the
 * dashboards.
 */
import { readFileSync } from 'node:fs';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { GENERATED_DIRECTORIES } from '../../src/generate/artifacts.js';
import { DASHBOARD_UID, type DashboardKey, GENERATED_NOTICE, OUTPUT } from '../../src/generate/defaults.js';
import { filesByPath } from './helpers.js';

const files = filesByPath();
const KEYS = Object.keys(DASHBOARD_UID) as DashboardKey[];
/** kubectl's client-side apply keeps the whole object in an annotation, limited to 256 KiB. */
const APPLY_ANNOTATION_LIMIT = 256 * 1024;

function yamlOf(path: string): Record<string, unknown> {
  const text = files.get(path);
  expect(text, path).toBeDefined();
  expect(text?.startsWith(`# ${GENERATED_NOTICE}\n`)).toBe(true);
  return parse(text ?? '') as Record<string, unknown>;
}

describe('deploy/monitoring', () => {
  it('PrometheusRule: valid, discoverable, and the same groups as the rule file', () => {
    const object = yamlOf(OUTPUT.prometheusRule);
    const rule = new PrometheusRule(object as never);
    expect(() => rule.validate()).not.toThrow();
    expect(rule.metadata?.name).toBe('workqueue-doctor');
    expect(rule.metadata?.labels).toMatchObject({ prometheus: 'k8s', role: 'alert-rules' });
    expect(rule.spec).toEqual(yamlOf(OUTPUT.alertRules));
  });

  it.each(KEYS)('%s dashboard ConfigMap: valid, labelled for the sidecar, holding the dashboard JSON', (key) => {
    const object = yamlOf(OUTPUT.dashboardConfigMap(key));
    const configMap = new ConfigMap(object as never);
    expect(() => configMap.validate()).not.toThrow();
    expect(configMap.metadata?.labels?.grafana_dashboard).toBe('1');
    const data = configMap.data ?? {};
    expect(Object.keys(data)).toEqual([`${DASHBOARD_UID[key]}.json`]);
    expect(data[`${DASHBOARD_UID[key]}.json`]).toBe(files.get(OUTPUT.dashboard(key)));
    expect(Buffer.byteLength(files.get(OUTPUT.dashboardConfigMap(key)) ?? '')).toBeLessThan(APPLY_ANNOTATION_LIMIT);
  });

  it('kustomization lists every resource in the directory, and nothing else', () => {
    const kustomization = yamlOf(OUTPUT.kustomization) as { apiVersion: string; kind: string; resources: string[] };
    expect(kustomization.apiVersion).toBe('kustomize.config.k8s.io/v1beta1');
    expect(kustomization.kind).toBe('Kustomization');
    const resources = [...files.keys()]
      .filter((p) => p.startsWith(`${OUTPUT.monitoringDir}/`))
      .filter((p) => {
        const doc = parse(files.get(p) ?? '') as { kind?: string; apiVersion?: string };
        return typeof doc.kind === 'string' && doc.kind !== 'Kustomization';
      })
      .map((p) => p.slice(OUTPUT.monitoringDir.length + 1));
    expect([...kustomization.resources].sort()).toEqual(resources.sort());
    expect(kustomization.resources).toContain('prometheus-rule.yaml');
    expect(Object.keys(kustomization)).toEqual(['apiVersion', 'kind', 'resources']);
  });

  it('Grafana provisioning example: a file provider for the dashboards', () => {
    const provisioning = yamlOf(OUTPUT.grafanaProvisioning) as {
      apiVersion: number;
      providers: Array<{ type: string; options: { path: string } }>;
    };
    expect(provisioning.apiVersion).toBe(1);
    expect(provisioning.providers).toHaveLength(1);
    expect(provisioning.providers[0]?.type).toBe('file');
    expect(provisioning.providers[0]?.options.path).toMatch(/^\/var\/lib\/grafana\/dashboards\//);
  });

  it('is committed as generated', () => {
    for (const [path, content] of files) {
      if (!GENERATED_DIRECTORIES.some((d) => path.startsWith(`${d.dir}/`)) && path !== OUTPUT.alertRules) continue;
      expect(readFileSync(path, 'utf8'), path).toBe(content);
    }
  });
});
