#!/bin/sh
# Builds bot.wasm from assembly/bot.ts (and assembly/arbiter.ts).
# Run it from anywhere: sh build.sh
# The first run installs the pinned compiler into node_modules/ (npm registry).
set -eu
cd "$(dirname "$0")"

if [ ! -x node_modules/.bin/asc ] || [ ! -f node_modules/@assemblyscript/wasi-shim/asconfig.json ]; then
  if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund
  else
    npm install --no-audit --no-fund
  fi
fi

# --config: the WASI shim (only wasi_snapshot_preview1 imports: abort, trace,
#           seed, console, process, crypto are routed to WASI calls).
# --exportStart _start: a WASI command (top-level code runs in _start).
# --runtime minimal: memory is freed between turns (arbiter.ts calls
#           __collect() after each reply), with no GC work inside a turn.
#           Switch to "incremental" if one turn allocates hundreds of MiB.
# -O3:      optimise for speed (fuel is the clock).
node_modules/.bin/asc assembly/bot.ts \
  --config node_modules/@assemblyscript/wasi-shim/asconfig.json \
  --exportStart _start \
  --runtime minimal \
  -O3 \
  -o bot.wasm

echo "built bot.wasm ($(wc -c < bot.wasm) bytes)"
