#!/bin/sh
# Builds bot.wasm (a WASI preview 1 command) from the C sources in this folder.
#   sh build.sh            # needs clang 14+, wasm-ld (lld) and wasi-libc
# CC and WASI_SYSROOT may be set to use another clang / sysroot.
set -eu
cd "$(dirname "$0")"

CC=${CC:-}
if [ -z "$CC" ]; then
  for c in clang clang-14; do
    if command -v "$c" >/dev/null 2>&1; then CC=$c; break; fi
  done
fi
[ -n "$CC" ] || { echo "build.sh: clang not found (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32)" >&2; exit 1; }
SYSROOT=""
if [ -n "${WASI_SYSROOT:-}" ]; then SYSROOT="--sysroot=$WASI_SYSROOT"; fi

# -z stack-size / --stack-first: a 1 MiB C stack placed before the data, so a
# stack overflow traps instead of silently overwriting globals (wasm-ld's
# default is a 64 KiB stack after the data). -s strips debug info and names.
# shellcheck disable=SC2086
"$CC" --target=wasm32-wasi $SYSROOT -std=c11 -O2 -Wall -Wextra \
  -Wl,-z,stack-size=1048576 -Wl,--stack-first -s \
  -o bot.wasm bot.c arbiter.c

echo "built bot.wasm ($(wc -c < bot.wasm | tr -d ' ') bytes)"
