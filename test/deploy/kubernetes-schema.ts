/**
 * Kubernetes schema checks for rendered manifests, stricter than the API server's defaults:
 *
 * - `validate()` of the kubernetes-models class for the object's apiVersion and kind (types, enums,
 *   required fields); an object of a kind that is not mapped fails.
 * - No unknown field anywhere. kubernetes-models does not check that (the Kubernetes OpenAPI schemas do not
 *   say `additionalProperties: false`), and the packages ship their schemas only as validator functions
 *   compiled from them (`_schemas/*.js`), not as JSON. So the check watches a validator at work: it runs the
 *   model's validator on a Proxy of the object that records, for every object node, which properties the
 *   validator read and whether it enumerated the keys. A compiled validator reads every property its schema
 *   declares (`data.x === undefined || check(data.x)`) and enumerates keys only where the schema allows any
 *   (`additionalProperties`, e.g. labels, ConfigMap data, resource quantities). Hence, per node:
 *   keys enumerated → a map, every key allowed; properties read → the declared ones, any other key is
 *   unknown; nothing read → a free-form object (`x-kubernetes-preserve-unknown-fields`), not checked.
 */
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';

export type KubernetesObject = { apiVersion: string; kind: string; [field: string]: unknown };

type ModelClass = (new (data: never) => { validate(): void }) & { prototype: { validate(): void } };

const MODELS: ReadonlyMap<string, ModelClass> = new Map<string, ModelClass>([
  ['v1/ConfigMap', ConfigMap],
  ['v1/Namespace', Namespace],
  ['v1/Service', Service],
  ['v1/ServiceAccount', ServiceAccount],
  ['apps/v1/Deployment', Deployment],
  ['rbac.authorization.k8s.io/v1/ClusterRole', ClusterRole],
  ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', ClusterRoleBinding],
  ['rbac.authorization.k8s.io/v1/Role', Role],
  ['rbac.authorization.k8s.io/v1/RoleBinding', RoleBinding],
  ['monitoring.coreos.com/v1/PodMonitor', PodMonitor],
  ['monitoring.coreos.com/v1/PrometheusRule', PrometheusRule],
  ['monitoring.coreos.com/v1/ServiceMonitor', ServiceMonitor],
]);

export function describeObject(object: KubernetesObject): string {
  const metadata = object['metadata'] as { name?: string; namespace?: string } | undefined;
  const name = metadata?.namespace ? `${metadata.namespace}/${metadata.name}` : metadata?.name;
  return `${object.apiVersion}/${object.kind} ${name ?? '(no name)'}`;
}

/** The model class of an object's apiVersion and kind; throws for a kind this check does not know. */
export function modelFor(object: KubernetesObject): ModelClass {
  const model = MODELS.get(`${object.apiVersion}/${object.kind}`);
  if (model === undefined) {
    throw new Error(
      `${describeObject(object)}: no schema mapped for apiVersion ${object.apiVersion}, kind ${object.kind} ` +
        `(known: ${[...MODELS.keys()].join(', ')})`,
    );
  }
  return model;
}

type NodeAccess = { reads: Set<string>; enumerated: boolean };

/** Runs `validate` on a recording Proxy of `root`; returns what was read or enumerated, per original node. */
function observeValidation(root: object, validate: (data: object) => void): WeakMap<object, NodeAccess> {
  const access = new WeakMap<object, NodeAccess>();
  const proxies = new WeakMap<object, object>();
  const wrap = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const existing = proxies.get(value);
    if (existing !== undefined) return existing;
    const node: NodeAccess = { reads: new Set(), enumerated: false };
    access.set(value, node);
    const proxy = new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === 'string') node.reads.add(key);
        return wrap(Reflect.get(target, key, receiver));
      },
      has(target, key) {
        if (typeof key === 'string') node.reads.add(key);
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        node.enumerated = true;
        return Reflect.ownKeys(target);
      },
    });
    proxies.set(value, proxy);
    return proxy;
  };
  try {
    validate(wrap(root) as object);
  } catch {
    // Schema errors are reported by `validate()` itself; only the access pattern matters here.
  }
  return access;
}

/** JSON-pointer-like paths (`/spec/template/spec/containers/0/foo`) of fields the schema does not declare. */
export function unknownFields(object: KubernetesObject): string[] {
  const model = modelFor(object);
  const access = observeValidation(object, (data) => model.prototype.validate.call(data));
  const found: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, `${path}/${index}`);
      return;
    }
    const node = access.get(value);
    // Never reached: under an unknown field (reported there) or inside a free-form object.
    if (node === undefined) return;
    const entries = Object.entries(value);
    if (node.enumerated) {
      for (const [key, child] of entries) walk(child, `${path}/${key}`);
      return;
    }
    if (node.reads.size === 0) return;
    for (const [key, child] of entries) {
      if (node.reads.has(key)) walk(child, `${path}/${key}`);
      else found.push(`${path}/${key}`);
    }
  };
  walk(object, '');
  return found;
}

/** Every schema problem of one object: the model's validation error, then each unknown field. */
export function schemaProblems(object: KubernetesObject): string[] {
  const model = modelFor(object);
  const problems: string[] = [];
  try {
    new model(object as never).validate();
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error));
  }
  for (const path of unknownFields(object)) problems.push(`unknown field ${path}`);
  return problems;
}
