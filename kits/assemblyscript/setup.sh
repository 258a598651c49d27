#!/usr/bin/env bash
# Toolchain of the AssemblyScript kit on a fresh Debian 12 machine (as root).
#
# Only Node.js and npm are installed here. The compiler itself is pinned per
# bot folder (template/package.json + package-lock.json: assemblyscript
# 0.28.20, @assemblyscript/wasi-shim 0.1.0) and installed from the npm
# registry by the template's build.sh (`npm ci`) on its first run.
#
# Node.js 18 or newer is needed. Debian 12's own `nodejs` (18.20.x) and `npm`
# (9.2) work (npm prints an EBADENGINE warning: assemblyscript asks for Node
# 20, but compiles the same bytes on 18). The Debian package version is not
# pinned exactly: security updates replace it on the mirror.
# Does nothing when a suitable node and npm are already there.
set -euo pipefail

node_ok() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
    [ "$(node -p 'Number(process.versions.node.split(".")[0]) >= 18' 2>/dev/null)" = "true" ]
}

if node_ok; then
  echo "assemblyscript kit: node $(node --version) and npm $(npm --version) present, nothing to install"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: run as root (apt-get install nodejs npm)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
if command -v node >/dev/null 2>&1 && ! command -v npm >/dev/null 2>&1; then
  # A node from elsewhere without npm: Debian's npm depends on Debian's nodejs.
  apt-get install -y --no-install-recommends npm || apt-get install -y --no-install-recommends nodejs npm
else
  apt-get install -y --no-install-recommends nodejs npm
fi

if ! node_ok; then
  echo "setup.sh: node >= 18 and npm are still missing after apt-get" >&2
  exit 1
fi
echo "assemblyscript kit: installed node $(node --version), npm $(npm --version)"
