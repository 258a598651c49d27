#!/usr/bin/env bash
# CI test of the C kit: builds the template in a temp folder, checks that
# `arbiter check` warns about the same bot linked with wasm-ld's default
# stack (and not about the template), that a native build plays the moves
# bot.wasm plays, checks it in every mode it claims, plays 2 matches per game
# against a house bot, and fails on any rejection or any fault of the kit's
# bot (see ../lib.sh). Then, with a copy of the arbiter binary alone in a
# folder outside the sources: `arbiter new c x-bot && cd x-bot && bash setup.sh &&
# sh build.sh && arbiter check bot.wasm` (the folder needs nothing else).
#   ARBITER=path/to/arbiter bash kits/c/test.sh   (default: target/debug/arbiter)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"

cc=$(command -v clang || command -v clang-14 || true)
[ -n "$cc" ] || { echo "FAIL: clang not found; run kits/c/setup.sh" >&2; exit 1; }
toolchain="$("$cc" --version | head -n1), $(wasm-ld --version 2>/dev/null | head -n1 || echo 'wasm-ld ?'), wasi-libc $(dpkg-query -W -f='${Version}' wasi-libc 2>/dev/null || echo '?')"

kit_start c
kit_build sh build.sh

# The template's stack flags are there for a reason: `arbiter check` warns
# about the same bot linked with wasm-ld's defaults (64 KiB of C stack
# after the data), and not about the template.
bash "$here/stack-default.sh" "$tmp/default.wasm" >/dev/null
echo "== check of the template built with the default stack"
"$ARBITER" check "$tmp/default.wasm" | tee "$tmp/default.txt"
grep -q "warning: the module's C stack (at most 6[0-9] KiB) sits after its data" "$tmp/default.txt" ||
  kit_fail "arbiter check did not warn about a 64 KiB C stack after the data"
if "$ARBITER" check bot.wasm | grep -q "warning: the module's C stack"; then
  kit_fail "arbiter check warned about the template's 1 MiB stack placed first"
fi

# The same source built natively plays the same moves from the same seed:
# `arbiter play` hands a native bot ARBITER_RANDOM (the bytes the sandbox's
# random_get would give), and the template breaks ties at random.
if cc -std=c11 -O2 -o native-bot bot.c arbiter.c 2>"$tmp/native.txt"; then
  same_moves_natively ./native-bot
else
  cat "$tmp/native.txt" >&2
  kit_fail "no native C compiler (cc): the native build is not compared"
fi

check_every_mode
play_every_game

# Outside the sources: only a copy of the binary, on PATH, in an empty
# folder; `arbiter new` writes everything the kit needs (setup.sh and the
# kit's README included) and the folder builds and passes the check.
echo "== outside the sources: arbiter new c x-bot && cd x-bot && bash setup.sh && sh build.sh && arbiter check bot.wasm"
outside="$tmp/outside"
mkdir -p "$outside/bin" "$outside/work"
cp "$ARBITER" "$outside/bin/arbiter"
if (
  cd "$outside/work"
  export PATH="$outside/bin:$PATH"
  arbiter new c x-bot && cd x-bot && bash setup.sh && sh build.sh && arbiter check bot.wasm
) >"$tmp/outside.txt" 2>&1; then
  cat "$tmp/outside.txt"
  cmp -s "$outside/work/x-bot/KIT-README.md" "$here/README.md" ||
    kit_fail "arbiter new did not write the kit's whole README as KIT-README.md"
else
  cat "$tmp/outside.txt" >&2
  kit_fail "arbiter new c x-bot && bash setup.sh && sh build.sh && arbiter check failed outside the sources"
fi

kit_report "$toolchain"
