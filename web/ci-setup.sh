#!/usr/bin/env bash
# Installs what the browser tests in web/tests need on a fresh Debian
# machine: Debian's chromium (Playwright cannot download browsers here) and
# the npm packages locked in web/package-lock.json. Idempotent: a second run
# changes nothing. Run as root (apt-get); .ci/run calls it.
#
# Then: cargo build -p arbiter-server && (cd web && npm test)
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends chromium fonts-dejavu-core
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends nodejs npm
fi

# npm ci is exact and fast when node_modules already matches the lock file.
if [ -f package-lock.json ]; then
  if [ ! -d node_modules/playwright-core ] || ! npm ls --silent >/dev/null 2>&1; then
    npm ci --no-audit --no-fund
  fi
else
  npm install --no-audit --no-fund
fi
