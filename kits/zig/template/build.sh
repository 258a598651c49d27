#!/bin/sh
# Builds bot.wasm (a WASI preview 1 command) from bot.zig + arbiter.zig.
# Usage: sh build.sh            (sh build.sh --version: which Zig it uses;
#                                sh build.sh --native: native-bot, to debug)
# Finds Zig 0.17.1 in this order: $ZIG (a command), the kit's venv
# /opt/arbiter-kits/zig-venv (made by kits/zig/setup.sh), `zig` on PATH,
# the `ziglang` Python package of python3.
set -eu
cd "$(dirname "$0")"
want=0.17.1
venv=${ARBITER_KITS_DIR:-/opt/arbiter-kits}/zig-venv

if [ -n "${ZIG:-}" ]; then
    zig=$ZIG
elif [ -x "$venv/bin/python3" ] && "$venv/bin/python3" -m ziglang version >/dev/null 2>&1; then
    zig="$venv/bin/python3 -m ziglang"
elif command -v zig >/dev/null 2>&1; then
    zig=zig
elif python3 -m ziglang version >/dev/null 2>&1; then
    zig="python3 -m ziglang"
else
    echo "build.sh: Zig not found. Install it: python3 -m pip install ziglang==$want" >&2
    echo "          (or run kits/zig/setup.sh, or set ZIG to a zig command)" >&2
    exit 1
fi

version=$($zig version)
if [ "${1:-}" = "--version" ]; then
    echo "zig $version ($zig)"
    exit 0
fi
if [ "${1:-}" = "--native" ]; then
    # For debugging: the same bot for this machine. Under `arbiter play
    # cmd:./native-bot` it seeds its generator from ARBITER_RANDOM and plays
    # the moves bot.wasm plays (its clock is the wall clock, though).
    $zig build-exe bot.zig -O ReleaseFast -femit-bin=native-bot
    rm -f native-bot.o
    echo "built native-bot"
    exit 0
fi
if [ "$version" != "$want" ]; then
    echo "build.sh: warning: this template is written for Zig $want, found $version ($zig)" >&2
fi

# ReleaseFast: fuel is the clock, and fast code spends ~2.5x less fuel than
# ReleaseSmall for ~35% more bytes. --stack: 1 MiB of shadow stack at the
# bottom of linear memory (Zig's default is 16 MiB).
$zig build-exe bot.zig -target wasm32-wasi -O ReleaseFast -fstrip \
    --stack 1048576 -femit-bin=bot.wasm
rm -f bot.wasm.o
echo "built bot.wasm ($(wc -c < bot.wasm) bytes)"
