/**
 * kubectl 1.20 from Debian's `kubernetes-client` package, for `kubectl kustomize`: its built-in kustomize is
 * v2.0.3, the oldest one users of `kubectl apply -k` may have, so manifests that render with it use only
 * kustomize v2 features. `/usr/bin/kubectl` may be another build (a newer kustomize accepts more), so it is
 * never used.
 *
 * The package is not installed (it would claim /usr/bin/kubectl): `apt-get download` fetches the .deb and
 * `dpkg -x` extracts it into a cache directory reused across runs, `$WQD_KUBECTL_DIR` or
 * `<tmpdir>/wqd-kubectl-1.20` (scripts/test.sh prepares the same directory). When it cannot be had, the
 * error says how to get it; callers fail with it rather than skip.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export const KUBECTL_DIR = process.env['WQD_KUBECTL_DIR'] || join(tmpdir(), 'wqd-kubectl-1.20');
export const KUBECTL = join(KUBECTL_DIR, 'usr', 'bin', 'kubectl');
const WANTED_VERSION = /GitVersion:"v1\.20\.\d+"/;

function howToGetIt(): string {
  return (
    `kubectl 1.20 (Debian package kubernetes-client) is needed at ${KUBECTL} to render deploy/ with kustomize v2. ` +
    'Run the test command as root (`bash scripts/test.sh` extracts it), or by hand: ' +
    `apt-get update && cd "$(mktemp -d)" && apt-get download kubernetes-client && ` +
    `dpkg -x kubernetes-client_*.deb ${KUBECTL_DIR}`
  );
}

async function clientVersion(kubectl: string): Promise<string> {
  const { stdout } = await exec(kubectl, ['version', '--client'], { timeout: 30_000 });
  return stdout.trim();
}

/** Downloads and extracts the package into `KUBECTL_DIR` (atomically: extracted beside it, then renamed). */
async function extract(): Promise<void> {
  const parent = dirname(KUBECTL_DIR);
  await mkdir(parent, { recursive: true });
  const download = await mkdtemp(join(tmpdir(), 'wqd-kubectl-deb-'));
  const staging = await mkdtemp(join(parent, 'wqd-kubectl-staging-'));
  try {
    await exec('apt-get', ['download', '-qq', 'kubernetes-client'], { cwd: download, timeout: 180_000 });
    const deb = (await readdir(download)).find(
      (name) => name.startsWith('kubernetes-client_') && name.endsWith('.deb'),
    );
    if (deb === undefined) throw new Error('apt-get download left no kubernetes-client .deb');
    await exec('dpkg', ['-x', join(download, deb), staging], { timeout: 120_000 });
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

/** The path of kubectl 1.20, extracting it first when the cache is empty. Rejects with how to get it. */
export function kubectl120(): Promise<string> {
  prepared ??= (async () => {
    try {
      if (!existsSync(KUBECTL)) await extract();
      const version = await clientVersion(KUBECTL);
      if (!WANTED_VERSION.test(version)) throw new Error(`${KUBECTL} is not kubectl 1.20: ${version}`);
      return KUBECTL;
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n').slice(0, 3).join(' ') : String(error);
      throw new Error(`${howToGetIt()}\n(${reason})`);
    }
  })();
  return prepared;
}

/** `kubectl kustomize DIR`: the rendered YAML stream. */
export async function kustomize(kubectl: string, dir: string): Promise<string> {
  const { stdout } = await exec(kubectl, ['kustomize', dir], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}
