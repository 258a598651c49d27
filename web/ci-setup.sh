#!/usr/bin/env bash
# Installs what the browser tests in web/tests need on a fresh Debian
# machine: Debian's chromium (Playwright cannot download browsers here),
# Node.js with npm, and the npm packages locked in web/package-lock.json
# (playwright-core, and axe-core for the accessibility checks). Idempotent:
# a second run installs nothing. Run as root (apt-get); .ci/run calls it.
#
# Then, from the repository root:
#   cargo build -p arbiter      # target/debug/arbiter and the house bots
#   (cd web && npm test)               # node --test: web/tests/*.test.mjs
set -euo pipefail
cd "$(dirname "$0")"

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ -z "${ARBITER_APT_UPDATED:-}" ]; then
    apt-get update
    ARBITER_APT_UPDATED=1
  fi
  apt-get install -y --no-install-recommends "$@"
}

if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  apt_install chromium fonts-dejavu-core
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi

# playwright-core needs Node.js 20 or newer.
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "web/ci-setup.sh: Node.js $(node --version) is too old for playwright-core: install Node.js 20 or newer" >&2
  exit 1
fi

# npm ci installs exactly the lock file; skip it when that is already there.
if [ ! -d node_modules/playwright-core ] || ! npm ls --silent >/dev/null 2>&1; then
  npm ci --no-audit --no-fund
fi
