#!/usr/bin/env bash
# CI test of the Zig kit: builds the template in a temp folder with its one
# build command, checks that its native build plays the moves bot.wasm
# plays, checks it in every mode it claims, plays 2 matches per game against
# a house bot, and fails on any rejection or any fault of the kit's bot (see
# ../lib.sh).
#   ARBITER=path/to/arbiter bash kits/zig/test.sh   (default: target/debug/arbiter)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"

kit_start zig
toolchain=$(sh build.sh --version) || { echo "FAIL: no Zig toolchain (run kits/zig/setup.sh)" >&2; exit 1; }
kit_build sh build.sh

# `arbiter play` hands a native bot ARBITER_RANDOM, from which rngFromHost
# seeds; the template breaks ties at random.
sh build.sh --native >/dev/null || kit_fail "build.sh --native failed"
same_moves_natively ./native-bot

check_every_mode
play_every_game
kit_report "$toolchain"
