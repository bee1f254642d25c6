/**
 * The direction of imports in `src/`: data flows from sources (scrape, recordings, Prometheus) through the
 * store and the PromQL evaluator into the diagnoses, their report, and the server and CLI that show it. A
 * module may import only from its own folder and from folders earlier in that flow, never later; the
 * reference queue and the utilities import nothing of the application; the generators read rule
 * definitions, never the engine that evaluates them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '..', 'src');

/** Folders of `src/`, in the order of the flow; a folder may import folders of its own rank or earlier. */
const LAYERS: readonly (readonly string[])[] = [
  ['util', 'queue'],
  ['metrics'],
  ['exposition'],
  ['scrape', 'discovery', 'store'],
  ['promql'],
  ['prometheus'],
  ['sources'],
  ['diagnosis'],
  ['simulate', 'config'],
  ['generate', 'service'],
  ['calibrate', 'server'],
  ['cli'],
];
const RANK = new Map(LAYERS.flatMap((folders, rank) => folders.map((folder) => [folder, rank] as const)));

/** Folders that import nothing of the application outside themselves. */
const SELF_CONTAINED = ['util', 'queue'];

/** The diagnosis modules that evaluate (rather than define) diagnoses: generators must not import them. */
const EVALUATION_MODULES = ['diagnosis/engine.ts', 'diagnosis/backend.ts', 'diagnosis/text-report.ts'];

type Import = { readonly from: string; readonly to: string };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports (static, re-exports and dynamic) of every file, as paths relative to `src/`. */
function imports(): Import[] {
  const out: Import[] = [];
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)'(\.{1,2}\/[^']+)'/g;
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(pattern)) {
      const target = resolve(dirname(file), (match[1] as string).replace(/\.js$/, '.ts'));
      out.push({ from: relative(SRC, file), to: relative(SRC, target) });
    }
  }
  return out;
}

const folderOf = (path: string) => path.split('/')[0] as string;
const ALL = imports();

describe('architecture', () => {
  it('finds the imports it checks', () => {
    expect(ALL.length).toBeGreaterThan(300);
    expect(ALL.some((i) => i.from === 'cli/bin.ts')).toBe(true);
  });

  it('places every folder of src/ in the flow', () => {
    const folders = new Set(sourceFiles(SRC).map((f) => folderOf(relative(SRC, f))));
    expect([...folders].filter((f) => !RANK.has(f) && !f.endsWith('.ts'))).toEqual([]);
  });

  it('imports only along the flow', () => {
    const against = ALL.filter((i) => (RANK.get(folderOf(i.to)) ?? 0) > (RANK.get(folderOf(i.from)) ?? 0)).map(
      (i) => `${i.from} -> ${i.to}`,
    );
    expect(against).toEqual([]);
  });

  it('keeps the reference queue and the utilities free of the application', () => {
    const leaks = ALL.filter((i) => SELF_CONTAINED.includes(folderOf(i.from)) && folderOf(i.to) !== folderOf(i.from));
    expect(leaks.map((i) => `${i.from} -> ${i.to}`)).toEqual([]);
  });

  it('has the generators read rule definitions, not the engine', () => {
    const reads = ALL.filter((i) => folderOf(i.from) === 'generate' && EVALUATION_MODULES.includes(i.to));
    expect(reads.map((i) => `${i.from} -> ${i.to}`)).toEqual([]);
  });

  it('has the report contract depend on no rule or engine', () => {
    const reads = ALL.filter(
      (i) =>
        /^diagnosis\/report(-schema)?\.ts$/.test(i.from) &&
        (i.to.startsWith('diagnosis/rules/') || EVALUATION_MODULES.includes(i.to) || i.to === 'diagnosis/catalog.ts'),
    );
    expect(reads.map((i) => `${i.from} -> ${i.to}`)).toEqual([]);
  });
});
