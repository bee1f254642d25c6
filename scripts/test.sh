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

# kubectl 1.20 (Debian's kubernetes-client: kustomize v2) renders deploy/ in the manifest tests. Extracted,
# not installed (it would replace /usr/bin/kubectl), into the directory test/deploy/kubectl.ts reads.
kubectl_dir="${WQD_KUBECTL_DIR:-${TMPDIR:-/tmp}/wqd-kubectl-1.20}"
if [ ! -x "$kubectl_dir/usr/bin/kubectl" ]; then
  echo "==> kubectl 1.20 (Debian kubernetes-client) into $kubectl_dir"
  deb_dir="$(mktemp -d)"
  if ! (cd "$deb_dir" && apt-get download -qq kubernetes-client 2>/dev/null); then
    if [ "$(id -u)" -ne 0 ]; then
      echo "need root for apt-get update (then: apt-get download kubernetes-client; dpkg -x kubernetes-client_*.deb $kubectl_dir)" >&2
      exit 1
    fi
    apt-get update -qq
    (cd "$deb_dir" && apt-get download -qq kubernetes-client)
  fi
  mkdir -p "$kubectl_dir"
  dpkg -x "$deb_dir"/kubernetes-client_*.deb "$kubectl_dir"
  rm -rf "$deb_dir"
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
