/**
 * Attaching a target's labels to scraped series, as Prometheus does with `honor_labels: false`
 * (scrape.go `mutateSampleLabels` / `resolveConflictingExposedLabels`): target labels always win;
 * a scraped label they clash with is kept as `exported_<name>` (`exported_exported_<name>` when
 * that is taken too, and so on), clashes resolved shortest name first.
 */
import { compareLabelNames, type Labels, labelValue, makeLabels, setLabel } from '../exposition/labels.js';

const EXPORTED_PREFIX = 'exported_';

export function applyTargetLabels(scraped: Labels, target: Labels): Labels {
  const targetNames = Object.keys(target).sort();
  if (targetNames.length === 0) return scraped;
  if (!targetNames.some((n) => Object.hasOwn(scraped, n))) return merged(scraped, target);
  const out = new Map<string, string>(Object.entries(scraped));
  const conflicting: { name: string; value: string }[] = [];
  for (const name of targetNames) {
    const existing = labelValue(scraped, name);
    if (existing !== undefined && existing !== '') conflicting.push({ name, value: existing });
    const value = target[name] as string;
    if (value === '') out.delete(name);
    else out.set(name, value);
  }
  if (conflicting.length === 0) return makeLabels(out);
  // Array.prototype.sort is stable, like sort.SliceStable.
  conflicting.sort((a, b) => a.name.length - b.name.length);
  for (let i = 0; i < conflicting.length; i++) {
    const c = conflicting[i] as { name: string; value: string };
    let newName = c.name;
    for (;;) {
      newName = EXPORTED_PREFIX + newName;
      const taken = newName in scraped || newName in target || conflicting.slice(0, i).some((d) => d.name === newName);
      if (!taken) {
        c.name = newName;
        break;
      }
    }
  }
  for (const c of conflicting) out.set(c.name, c.value);
  return makeLabels(out);
}

/** Both label sets in one object, in canonical order (no name in common; empty values left out). */
function merged(a: Labels, b: Labels): Labels {
  const an = Object.keys(a).sort(compareLabelNames);
  const bn = Object.keys(b).sort(compareLabelNames);
  const out: Record<string, string> = {};
  let i = 0;
  let j = 0;
  while (i < an.length || j < bn.length) {
    const x = an[i];
    const y = bn[j];
    const fromA = y === undefined || (x !== undefined && compareLabelNames(x, y) < 0);
    const name = (fromA ? x : y) as string;
    const value = (fromA ? a[name] : b[name]) as string;
    if (fromA) i++;
    else j++;
    if (value !== '') setLabel(out, name, value);
  }
  return out;
}
