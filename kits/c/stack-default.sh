#!/usr/bin/env bash
# Builds the C template WITHOUT the stack flags of its build.sh, i.e. with
# wasm-ld's defaults: a 64 KiB C stack placed after the data (an overflow then
# silently overwrites globals instead of trapping). For tests that check that
# `arbiter check` warns about such modules.
#   bash kits/c/stack-default.sh OUT.wasm
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUT.wasm" >&2
  exit 2
fi
out=$1
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CC=${CC:-}
if [ -z "$CC" ]; then
  for c in clang clang-14; do
    if command -v "$c" >/dev/null 2>&1; then CC=$c; break; fi
  done
fi
[ -n "$CC" ] || { echo "stack-default.sh: clang not found (run kits/c/setup.sh)" >&2; exit 1; }
"$CC" --target=wasm32-wasi -std=c11 -O2 -Wall -Wextra -s \
  -o "$out" "$here/template/bot.c" "$here/template/arbiter.c"
echo "built $out ($(wc -c < "$out" | tr -d ' ') bytes, default 64 KiB stack after the data)"
