#!/usr/bin/env bash
# Installs the JavaScript kit's producer, @bytecodealliance/componentize-js
# 0.23.0 (npm: SpiderMonkey built for WebAssembly, and the tools that make a
# component of it), into the kit cache:
#   ${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}/javascript/node_modules
# which build.sh uses: once per user, never into a bot folder. The versions
# of it and of everything it brings are pinned by package.json and
# package-lock.json in producer/ beside this script (a bot folder), or beside
# it (kits/javascript) (`npm ci`).
# Needs Node.js >= 18 with npm (Debian 12: apt-get install nodejs npm, as
# root; this script does that when they are missing and it is root) and the
# npm registry the first time; does nothing, quietly, when the pinned
# version is there.
set -euo pipefail
COMPONENTIZE_JS_VERSION=0.23.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The pins: producer/ in a bot folder (its own package.json is the bot's).
pins=$here/producer
[ -f "$pins/package-lock.json" ] || pins=$here
cache=${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}
dir=$cache/javascript

node_ok() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
    [ "$(node -p 'Number(process.versions.node.split(".")[0]) >= 18' 2>/dev/null)" = "true" ]
}
installed() {
  [ -x "$dir/node_modules/.bin/componentize-js" ] &&
    cmp -s "$pins/package-lock.json" "$dir/package-lock.json" &&
    [ "$(node -p "require('$dir/node_modules/@bytecodealliance/componentize-js/package.json').version" 2>/dev/null)" = "$COMPONENTIZE_JS_VERSION" ]
}
if node_ok && installed; then
  exit 0
fi

for f in package.json package-lock.json; do
  [ -f "$pins/$f" ] || { echo "setup.sh: $pins/$f is missing (it pins componentize-js)" >&2; exit 1; }
done
if ! node_ok; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: node >= 18 and npm are needed (as root: apt-get install nodejs npm)" >&2
    exit 1
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs npm
  node_ok || { echo "setup.sh: node >= 18 and npm are still missing after apt-get" >&2; exit 1; }
fi
mkdir -p "$dir"
# npm ci empties node_modules: a link to another install is unlinked, not emptied.
if [ -L "$dir/node_modules" ]; then
  rm "$dir/node_modules"
fi
cp "$pins/package.json" "$pins/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
installed || { echo "setup.sh: componentize-js $COMPONENTIZE_JS_VERSION is not in $dir/node_modules after npm ci" >&2; exit 1; }
echo "javascript kit: componentize-js $COMPONENTIZE_JS_VERSION installed in $dir/node_modules"
