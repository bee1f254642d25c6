/** Rendered Kubernetes objects (from kustomize or helm), parsed and picked by kind, for the deploy tests. */
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { expect } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from './kubernetes-schema.js';

/** Every object of a YAML stream (empty documents left out); a YAML error fails the test naming `where`. */
export function parseObjects(text: string, where: string): KubernetesObject[] {
  return parseAllDocuments(text)
    .map((document) => {
      expect(document.errors, `${where}: rendered YAML`).toEqual([]);
      return document.toJS() as KubernetesObject | null;
    })
    .filter((o): o is KubernetesObject => o !== null);
}

export function ofKind<T>(objects: readonly KubernetesObject[], kind: string): T[] {
  return objects.filter((o) => o.kind === kind) as unknown as T[];
}

export function only<T>(objects: readonly KubernetesObject[], kind: string): T {
  const found = ofKind<T>(objects, kind);
  expect(found, `exactly one ${kind}`).toHaveLength(1);
  return found[0]!;
}

export function podSpec(deployment: IDeployment): IPodSpec {
  const spec = deployment.spec?.template.spec;
  expect(spec, `${deployment.metadata?.name}: pod spec`).toBeDefined();
  return spec!;
}

export function container(deployment: IDeployment, name: string): IContainer {
  const found = podSpec(deployment).containers.find((c) => c.name === name);
  expect(found, `${deployment.metadata?.name}: container ${name}`).toBeDefined();
  return found!;
}

/** Whether every key of `selector` has its value in `labels`. */
export function sameKeyAndValues(
  selector: Record<string, string>,
  labels: Record<string, string> | undefined,
): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}
