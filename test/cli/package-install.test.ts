/**
 * The package as a user installs it: `npm pack` (its `prepack` builds dist/) of a copy of what the package is
 * made of (the sources, the tsconfig, the generated files, package.json and the README; the other test files
 * run the repository's own dist/ meanwhile, which a rebuild in place would remove), then `npm install` of the tarball
 * into an empty directory, then the installed `workqueue-doctor` binary, which runs from that directory only:
 * `--version`, `simulate --record` and `diagnose --recording`, `generate --out`, and `serve --demo` until it
 * answers /healthz and serves its page's assets, then SIGTERM and exit 0. Every path the code reads beside
 * itself (package.json, the uPlot files, the worker modules) must be in the tarball or its dependencies.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { freePort } from '../support/daemon.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  files: string[];
};
/** What `npm pack` reads beside the package's `files` (dist/ among them, which `prepack` builds from these). */
const PACK_SOURCES = ['package.json', 'README.md', 'tsconfig.json', 'src'];
/** Packing compiles the whole project; installing may fetch the dependencies not in npm's cache. */
const SETUP_TIMEOUT_MS = 600_000;
const COMMAND_TIMEOUT = { timeout: 120_000 };

const temps: string[] = [];
const processes = new Set<ChildProcess>();
let bin = '';
let work = '';

type Result = { readonly code: number | null; readonly stdout: string; readonly stderr: string };

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** Starts `file args` in `cwd`, collecting its output; the process is killed in afterAll if still running. */
function start(file: string, args: readonly string[], cwd: string): { child: ChildProcess; result: Promise<Result> } {
  const child = spawn(file, [...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  processes.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const result = new Promise<Result>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      processes.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, result };
}

function run(file: string, args: readonly string[], cwd: string): Promise<Result> {
  return start(file, args, cwd).result;
}

/** Runs npm, failing with its output when it does not exit 0. */
async function npm(args: readonly string[], cwd: string): Promise<string> {
  const result = await run('npm', args, cwd);
  if (result.code !== 0) throw new Error(`npm ${args.join(' ')} exited ${result.code}:\n${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  const source = tempDir('wqd-pack-source-');
  for (const entry of [...PACK_SOURCES, ...PACKAGE.files.filter((f) => f !== 'dist')]) {
    cpSync(join(ROOT, entry), join(source, entry), { recursive: true });
  }
  // The build's tools and types, as in the repository.
  symlinkSync(join(ROOT, 'node_modules'), join(source, 'node_modules'), 'dir');
  const packed = tempDir('wqd-pack-');
  await npm(['pack', '--pack-destination', packed, '--no-audit', '--no-fund'], source);
  const tarball = join(packed, `${PACKAGE.name}-${PACKAGE.version}.tgz`);
  expect(existsSync(tarball), tarball).toBe(true);
  const installed = tempDir('wqd-install-');
  await npm(['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], installed);
  bin = join(installed, 'node_modules', '.bin', 'workqueue-doctor');
  // The commands run in a directory of their own, away from the repository and the installation.
  work = tempDir('wqd-installed-run-');
}, SETUP_TIMEOUT_MS);

afterAll(() => {
  for (const child of processes) child.kill('SIGKILL');
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

describe('the installed package', () => {
  it('prints the version of package.json', COMMAND_TIMEOUT, async () => {
    const result = await run(bin, ['--version'], work);
    expect(result.code).toBe(EXIT.ok);
    expect(result.stdout.trim()).toBe(PACKAGE.version);
  });

  it('records a scenario and diagnoses the recording', COMMAND_TIMEOUT, async () => {
    const recording = join(work, 'hot-loop.om');
    const recorded = await run(
      bin,
      ['simulate', '--scenario', 'hot-loop-status-write', '--duration', '10m', '--record', recording],
      work,
    );
    expect(recorded.code, recorded.stderr).toBe(EXIT.ok);
    const diagnosed = await run(bin, ['diagnose', '--recording', recording], work);
    // The hot loop is a warning finding, which the default --fail-on counts.
    expect(diagnosed.code, diagnosed.stderr).toBe(EXIT.findings);
    expect(diagnosed.stdout).toContain('ingress-status');
    expect(diagnosed.stdout).toContain('WorkqueueHotLoop');
  });

  it('generates the dashboards, the alert rules and the schema under --out', COMMAND_TIMEOUT, async () => {
    const out = join(work, 'generated');
    const result = await run(bin, ['generate', '--out', out], work);
    expect(result.code, result.stderr).toBe(EXIT.ok);
    expect(result.stdout).toMatch(/^wrote \d+ files under /);
    expect(readdirSync(join(out, 'dashboards')).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
    expect(existsSync(join(out, 'alerts', 'workqueue-doctor.rules.yaml'))).toBe(true);
    expect(existsSync(join(out, 'schemas', 'report.schema.json'))).toBe(true);
  });

  it('serves the demo until SIGTERM, then exits 0', { timeout: 180_000 }, async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const serve = start(bin, ['serve', '--demo', '--listen', `127.0.0.1:${port}`], work);
    let exited = false;
    void serve.result.then(() => {
      exited = true;
    });
    let health: Response | undefined;
    while (health?.status !== 200) {
      if (exited) throw new Error(`serve --demo exited before answering /healthz:\n${(await serve.result).stderr}`);
      health = await fetch(`${origin}/healthz`).catch(() => undefined);
      if (health?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The page links its assets, uPlot's among them, read from the installed `uplot` package.
    const page = await (await fetch(`${origin}/`)).text();
    const assets = [...page.matchAll(/\/assets\/[\w.-]+/g)].map((m) => m[0]);
    expect(assets.some((a) => a.startsWith('/assets/uplot.'))).toBe(true);
    for (const asset of new Set(assets)) expect((await fetch(`${origin}${asset}`)).status, asset).toBe(200);
    serve.child.kill('SIGTERM');
    const result = await serve.result;
    expect(result.code, result.stderr).toBe(EXIT.ok);
  });
});
