/**
 * Where the scrape source gets its targets: a fixed list (flags, a config file) or a live provider
 * such as the Kubernetes pod discovery, which says when its list changes.
 */
import { STATIC_JOB } from '../discovery/static.js';
import type { Target } from '../discovery/target.js';
import { LABEL } from '../metrics/names.js';

/** Anything that lists targets and announces changes; `createPodDiscovery` is one. */
export interface DynamicTargetProvider {
  /** The current targets. */
  targets(): readonly Target[];
  /** Calls `listener` with the new list whenever it changes; returns an unsubscribe function. */
  on(event: 'change', listener: (targets: Target[]) => void): () => void;
}

export type TargetProvider = readonly Target[] | DynamicTargetProvider;

export function isDynamicProvider(provider: TargetProvider): provider is DynamicTargetProvider {
  return typeof (provider as Partial<DynamicTargetProvider>).on === 'function';
}

/**
 * The labels a target's series are stored under: the target's own labels without empty values,
 * with `job` (default `static`) and `instance` (`host:port` of the URL) filled in when missing.
 * Discovery and `staticTargets` always set both; this only covers hand-made targets.
 */
export function scrapeLabels(target: Target): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(target.labels)) if (v !== '') out[k] = v;
  if (out[LABEL.job] === undefined) out[LABEL.job] = STATIC_JOB;
  if (out[LABEL.instance] === undefined) {
    const instance = instanceOf(target.url);
    if (instance !== undefined) out[LABEL.instance] = instance;
  }
  return out;
}

function instanceOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return undefined;
  }
}

/** A canonical text of a label set, for equality checks. */
export function labelSignature(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
