/**
 * The container image, without a Docker engine: the Dockerfile is parsed and held to the image's contract
 * (multi-stage, Node 22 runtime, numeric non-root user, exec-form entrypoint, production dependencies only,
 * no secrets, no remote ADD, a build context that is an allow-list), and a production install made the way
 * the image makes it (`npm ci --omit=dev` beside the compiled dist/) is shown to start the CLI, so no
 * development dependency is needed at run time.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Arg, Copy, DockerfileParser, Env, type From, type Instruction, JSONInstruction, Label } from 'dockerfile-ast';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const dockerfile = DockerfileParser.parse(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

type Stage = { from: From; name: string | null; instructions: Instruction[] };

/** The build stages in order, each with the instructions between its FROM and the next. */
function stages(): Stage[] {
  const froms = dockerfile.getFROMs();
  return froms.map((from, index) => {
    const start = from.getRange().start.line;
    const end = froms[index + 1]?.getRange().start.line ?? Number.POSITIVE_INFINITY;
    const instructions = dockerfile.getInstructions().filter((i) => {
      const line = i.getRange().start.line;
      return line > start && line < end;
    });
    return { from, name: from.getBuildStage(), instructions };
  });
}

const STAGES = stages();
const FINAL = STAGES.at(-1)!;

function keyword(stage: Stage, name: string): Instruction[] {
  return stage.instructions.filter((i) => i.getKeyword() === name);
}

/** A JSON-form (exec-form) instruction's arguments; null for the shell form. */
function execForm(instruction: Instruction): string[] | null {
  if (!(instruction instanceof JSONInstruction) || instruction.getOpeningBracket() === null) return null;
  const parsed: unknown = JSON.parse(instruction.getArgumentsContent() ?? '');
  return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : null;
}

function copySources(copy: Instruction): string[] {
  const args = copy.getArguments().map((a) => a.getValue());
  return args.filter((a) => !a.startsWith('--')).slice(0, -1);
}

function fromFlag(copy: Instruction): string | null {
  return copy instanceof Copy ? (copy.getFromFlag()?.getValue() ?? null) : null;
}

/** Name and value of each property of ENV and LABEL instructions, and the name of each ARG. */
function properties(instruction: Instruction): Array<[string, string | null]> {
  if (instruction instanceof Env || instruction instanceof Label) {
    return instruction.getProperties().map((p) => [p.getName(), p.getValue()]);
  }
  if (instruction instanceof Arg) {
    const property = instruction.getProperty();
    return property === null ? [] : [[property.getName(), property.getValue()]];
  }
  return [];
}

/** The stage a `COPY --from=X` reads: a stage name or index. */
function stageOf(reference: string): Stage | undefined {
  return /^\d+$/.test(reference) ? STAGES[Number(reference)] : STAGES.find((s) => s.name === reference);
}

/** What the runtime stage copies from the build context, as paths relative to the repository root. */
function runtimeContextSources(): string[] {
  return keyword(FINAL, 'COPY')
    .filter((c) => fromFlag(c) === null)
    .flatMap(copySources)
    .map((s) => s.replace(/^\.\//, '').replace(/\/$/, ''));
}

describe('Dockerfile', () => {
  it('is multi-stage and every stage builds from Node 22 slim, pinned to a release tag', () => {
    expect(STAGES.length).toBeGreaterThanOrEqual(2);
    for (const stage of STAGES) {
      expect(stage.from.getImageName()).toBe('node');
      expect(stage.from.getImageTag()).toMatch(/^22\.\d+\.\d+-(bookworm|trixie)-slim$/);
    }
    const names = STAGES.map((s) => s.name).filter((n) => n !== null);
    expect(new Set(names).size).toBe(names.length);
  });

  it('every COPY --from names an earlier stage', () => {
    for (const [index, stage] of STAGES.entries()) {
      for (const copy of keyword(stage, 'COPY')) {
        const reference = fromFlag(copy);
        if (reference === null) continue;
        const source = stageOf(reference);
        expect(source, `COPY --from=${reference}`).toBeDefined();
        expect(STAGES.indexOf(source!)).toBeLessThan(index);
      }
    }
  });

  it('builds with the lockfile and compiles in a stage of its own', () => {
    const runs = STAGES.flatMap((s) => keyword(s, 'RUN').map((r) => r.getArgumentsContent() ?? ''));
    expect(runs.some((r) => /\bnpm ci\b/.test(r) && !/--omit=dev/.test(r))).toBe(true);
    expect(runs.some((r) => /\bnpm run build\b/.test(r))).toBe(true);
    expect(runs.some((r) => /\bnpm install\b/.test(r))).toBe(false);
  });

  it('the runtime gets production dependencies only (npm ci --omit=dev or prune), and compiled code', () => {
    const copies = keyword(FINAL, 'COPY');
    const modules = copies.find((c) => copySources(c).some((s) => s.endsWith('node_modules')));
    expect(modules, 'node_modules copied into the runtime').toBeDefined();
    const from = stageOf(fromFlag(modules!) ?? '');
    expect(from, 'node_modules come from a build stage').toBeDefined();
    const runs = keyword(from!, 'RUN').map((r) => r.getArgumentsContent() ?? '');
    expect(runs.some((r) => /\bnpm (ci|prune)\b[^&;|]*--omit=dev/.test(r))).toBe(true);

    const sources = copies.flatMap((c) => copySources(c).map((s) => `${fromFlag(c) ?? 'context'}:${s}`));
    expect(sources.sort()).toEqual([
      'build:/app/dist',
      'context:package.json',
      'context:schemas',
      'prod-deps:/app/node_modules',
    ]);
    expect(keyword(FINAL, 'ADD')).toEqual([]);
  });

  it('the runtime never calls npm and runs as a numeric non-root user, in production mode', () => {
    for (const run of keyword(FINAL, 'RUN')) {
      expect(run.getArgumentsContent()).not.toMatch(/(^|[;&|]\s*)(npm|npx|yarn|corepack)\s/);
    }
    const users = keyword(FINAL, 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.getArgumentsContent() ?? '';
    expect(user).toMatch(/^\d+:\d+$/);
    const [uid, gid] = user.split(':').map(Number);
    expect(uid).toBe(65532);
    expect(gid).toBe(65532);
    // Nothing after USER may switch back or write as root.
    const userLine = users.at(-1)!.getRange().start.line;
    expect(FINAL.instructions.filter((i) => i.getRange().start.line > userLine && i.getKeyword() === 'RUN')).toEqual(
      [],
    );
    expect(keyword(FINAL, 'ENV').flatMap(properties)).toContainEqual(['NODE_ENV', 'production']);
  });

  it('starts the compiled CLI with node in exec form: ENTRYPOINT node dist/cli/bin.js, CMD serve', () => {
    const entrypoints = keyword(FINAL, 'ENTRYPOINT');
    const cmds = keyword(FINAL, 'CMD');
    expect(entrypoints).toHaveLength(1);
    expect(cmds).toHaveLength(1);
    expect(execForm(entrypoints[0]!)).toEqual(['node', '/app/dist/cli/bin.js']);
    expect(execForm(cmds[0]!)).toEqual(['serve']);
    expect(existsSync(join(ROOT, 'src/cli/bin.ts'))).toBe(true);
    const workdirs = keyword(FINAL, 'WORKDIR').map((w) => w.getArgumentsContent());
    expect(workdirs.at(-1)).toBe('/app');
    expect(keyword(FINAL, 'EXPOSE').map((e) => e.getArgumentsContent())).toEqual(['9808']);
  });

  it('bakes in no secret: no ADD of URLs, no ENV or ARG named like a credential', () => {
    for (const add of dockerfile.getInstructions().filter((i) => i.getKeyword() === 'ADD')) {
      expect(add.getArgumentsContent()).not.toMatch(/(https?|git|ftp):\/\/|git@/);
    }
    const names = [
      ...dockerfile.getInitialARGs().flatMap(properties),
      ...dockerfile
        .getInstructions()
        .filter((i) => i.getKeyword() === 'ARG' || i.getKeyword() === 'ENV')
        .flatMap(properties),
    ].map(([name]) => name);
    expect(names.filter((n) => /TOKEN|PASSWORD|PASSWD|SECRET|KEY|CREDENTIAL|AUTH/i.test(n))).toEqual([]);
    // A secret mounted at build time (RUN --mount=type=secret) would be fine; none is needed.
    expect(
      dockerfile
        .getInstructions()
        .filter((i) => i.getKeyword() === 'RUN' && /--mount=type=secret/.test(i.getArgumentsContent() ?? '')),
    ).toEqual([]);
  });

  it('labels the image with OCI annotations, version from package.json', () => {
    const labels = new Map<string, string>();
    for (const [name, value] of keyword(FINAL, 'LABEL').flatMap(properties)) {
      labels.set(name, (value ?? '').replace(/^"|"$/g, ''));
    }
    expect(labels.get('org.opencontainers.image.version')).toBe(PACKAGE.version);
    for (const key of ['title', 'description', 'licenses', 'source']) {
      expect(labels.get(`org.opencontainers.image.${key}`), key).toMatch(/\S/);
    }
    expect(keyword(FINAL, 'HEALTHCHECK')).toEqual([]);
  });

  it('.dockerignore excludes everything except what the Dockerfile copies from the context', () => {
    const lines = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(lines[0]).toBe('*');
    const allowed = new Set(lines.slice(1).map((l) => l.replace(/^!/, '').replace(/\/$/, '')));
    expect(lines.slice(1).every((l) => l.startsWith('!'))).toBe(true);
    const fromContext = STAGES.flatMap((s) =>
      keyword(s, 'COPY')
        .filter((c) => fromFlag(c) === null)
        .flatMap(copySources),
    ).map((s) => s.replace(/^\.\//, '').replace(/\/$/, ''));
    expect(fromContext).not.toContain('.');
    expect([...new Set(fromContext)].sort()).toEqual([...allowed].sort());
  });
});

async function compiledFiles(directory: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.js')) files.push(join(entry.parentPath, entry.name));
  }
  return files.sort();
}

describe('a production install like the image', () => {
  let dir = '';
  const run = (args: string[], timeout = 30_000) => exec(process.execPath, args, { cwd: dir, timeout });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wqd-image-'));
    // Compile as the build stage does (`npm run build`: tsc -p tsconfig.json), into the install directory.
    await exec(
      join(ROOT, 'node_modules/.bin/tsc'),
      ['-p', join(ROOT, 'tsconfig.json'), '--outDir', join(dir, 'dist')],
      {
        cwd: ROOT,
        timeout: 120_000,
      },
    );
    // The files the runtime stage copies from the build context (package.json, schemas/), and the lockfile.
    for (const source of [...runtimeContextSources(), 'package-lock.json']) {
      await cp(join(ROOT, source), join(dir, source), { recursive: true });
    }
    await exec('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: dir,
      timeout: 180_000,
      env: { ...process.env, NODE_ENV: 'production' },
    });
  }, 300_000);

  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('holds exactly the packages the lockfile needs in production: no development-only one', async () => {
    const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean; optional?: boolean; devOptional?: boolean }>;
    };
    const devOnly: string[] = [];
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!path.startsWith('node_modules/')) continue;
      const present = existsSync(join(dir, path, 'package.json'));
      if (entry.dev === true && present) devOnly.push(path);
      if (entry.dev !== true && entry.optional !== true && entry.devOptional !== true && !present) missing.push(path);
    }
    expect(devOnly).toEqual([]);
    expect(missing).toEqual([]);
    for (const name of Object.keys(PACKAGE.dependencies)) {
      expect(existsSync(join(dir, 'node_modules', name, 'package.json')), name).toBe(true);
    }
    // The compiler, the test runner and the linters are not there.
    for (const name of ['typescript', 'vitest', 'tsx', '@biomejs/biome', 'dockerfile-ast']) {
      expect(existsSync(join(dir, 'node_modules', name)), name).toBe(false);
    }
  });

  it('runs `node dist/cli/bin.js --version` and `--help`', async () => {
    const version = await run(['dist/cli/bin.js', '--version']);
    expect(version.stdout.trim()).toBe(PACKAGE.version);
    const help = await run(['dist/cli/bin.js', '--help']);
    expect(help.stdout).toMatch(/^Usage: workqueue-doctor/m);
    expect(help.stderr).toBe('');
  });

  it('holds every file the compiled code reads beside itself (new URL(..., import.meta.url))', async () => {
    const files = await compiledFiles(join(dir, 'dist'));
    const read: string[] = [];
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/new URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g)) {
        const target = fileURLToPath(new URL(match[1]!, pathToFileURL(file)));
        read.push(target);
        expect(existsSync(target), `${file} reads ${match[1]}`).toBe(true);
      }
    }
    expect(read).toContain(join(dir, 'package.json'));
  });

  it('resolves every package the compiled code imports', async () => {
    const files = await compiledFiles(join(dir, 'dist'));
    expect(files.length).toBeGreaterThan(10);
    const specifiers = new Set<string>();
    const builtins = new Set(builtinModules);
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      const imports = [
        ...text.matchAll(/^(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/^import\s*['"]([^'"]+)['"]/gm),
        ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
      ];
      for (const match of imports) {
        const specifier = match[1]!;
        if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier)) continue;
        specifiers.add(specifier);
      }
    }
    expect(specifiers.size).toBeGreaterThan(0);
    // Resolved as Node resolves them from the install (ESM conditions), without running any module.
    const script = `for (const s of ${JSON.stringify([...specifiers].sort())}) import.meta.resolve(s);`;
    const resolved = await exec(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(dir, 'dist'),
      timeout: 30_000,
    });
    expect(resolved.stderr).toBe('');
  });
});
