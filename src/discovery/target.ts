/**
 * A scrape target, as discovery produces it and the scraper consumes it.
 *
 * - `key` is a stable identity: it stays the same while the target is "the same endpoint" (a static
 *   URL; a pod's namespace, name and port), so history and health survive a pod IP change.
 * - `url` is the full http(s) URL of the metrics page.
 * - `labels` identify the target in reports and queries: `job` and `instance` always; pods add
 *   `namespace`, `pod` and, when known, `container`.
 */
export interface Target {
  key: string;
  url: string;
  labels: Record<string, string>;
}

export function sameTarget(a: Target, b: Target): boolean {
  if (a.key !== b.key || a.url !== b.url) return false;
  const ak = Object.keys(a.labels);
  if (ak.length !== Object.keys(b.labels).length) return false;
  return ak.every((k) => a.labels[k] === b.labels[k]);
}

/** Targets in a stable order (by key). */
export function sortTargets(targets: Iterable<Target>): Target[] {
  return [...targets].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
