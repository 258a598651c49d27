#!/usr/bin/env bash
# CI test of the JavaScript kit: installs componentize-js into the kit cache
# (setup.sh; nothing when it is there), builds the template in a temporary
# folder with its one build command, checks the component in every mode it
# claims (skirmish included), plays 2 matches per game against a house bot,
# plays every game natively (`cmd:node bot.js`), checks that the native
# run plays the component's moves from the same seeds (Othello,
# tic-tac-toe, skirmish), and fails on any rejection or any fault of the
# kit's bot (see ../lib.sh). Then the kit as it is used: a bot that calls
# Math.random() at its top level is refused by build.sh with what to do; a
# bot importing an npm package (fflate, `npm install`ed in the folder, which
# installs it alone, not the producer) is refused by bundle.mjs before the
# install, and after it builds (rolldown bundles the package in), passes
# `arbiter check` and plays with the name it computed with the package. A
# JavaScript component is ~13 MB (a whole SpiderMonkey) and builds in 7-14 s.
#   ARBITER=path/to/arbiter bash kits/javascript/test.sh   (default: target/debug/arbiter)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
GAMES="$GAMES $("$ARBITER" games --ladders skirmish | tr '\n' ' ')"

bash "$here/setup.sh"
cache=${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}
toolchain="componentize-js $(node -p "require('$cache/javascript/node_modules/@bytecodealliance/componentize-js/package.json').version"), node $(node --version)"

kit_start javascript
# A clean copy, before the build, for the tests of the kit as it is used.
cp -R . "$tmp/clean"
kit_build sh build.sh

# The template's moves depend on the request alone, so `node bot.js`
# under `arbiter play cmd:` plays what the component plays. Native runs are
# timed by the wall clock: roomy controls keep a slow start-up from
# changing a game (a skirmish tick of 200 ms was once overrun on a busy
# 2-core machine: a skipped tick is another game). A bot that answers
# early ends its tick early, so a roomy control costs nothing.
same_moves_natively 'node bot.js'
same_moves_natively 'node bot.js' tictactoe house:tictactoe-perfect
same_moves_natively 'node bot.js' skirmish house:skirmish-economy 2000/10000
play_natively 'node bot.js'

check_every_mode
play_every_game

# Top-level randomness is refused by the kit's build with what to do (the
# top level runs at build time, with no host).
echo "== a bot calling Math.random() at its top level"
cp -R "$tmp/clean" "$tmp/toplevel"
sed -i 's|^class MyBot|const EARLY = Math.random();\nclass MyBot|' "$tmp/toplevel/bot.js"
if (cd "$tmp/toplevel" && sh build.sh) >"$tmp/toplevel.txt" 2>&1; then
  kit_fail "build.sh built a bot that calls Math.random() at its top level"
elif ! grep -q "build.sh: bot.wasm was not built: the top level of a module runs at build time.*Math.random()" "$tmp/toplevel.txt" ||
  ! grep -q "inside a method" "$tmp/toplevel.txt"; then
  cat "$tmp/toplevel.txt" >&2
  kit_fail "build.sh did not say what to do about Math.random() at the top level"
fi

# An npm package: refused with what to do until it is installed, then
# bundled in; `npm install` in the folder installs it alone.
echo "== a bot using an npm package (fflate)"
cp -R "$tmp/clean" "$tmp/package"
cd "$tmp/package"
sed -i "s|^import { Bot, run, flips, winner } from './arbiter.js';|&\nimport { strToU8, strFromU8, zlibSync, unzlibSync } from 'fflate';|" bot.js
sed -i "s|this.name = 'my-bot';|this.name = strFromU8(unzlibSync(zlibSync(strToU8('pkg-bot'))));|" bot.js
grep -q "from 'fflate'" bot.js && grep -q "strToU8('pkg-bot')" bot.js || kit_fail "the template changed: the package test edits nothing"
if sh build.sh >"$tmp/bare.txt" 2>&1; then
  kit_fail "build.sh built a bot importing a package that is not installed"
elif ! grep -q "bundle.mjs: bot.js:[0-9]*: 'fflate' is an npm package, not in node_modules/: install it in the bot folder first (npm install fflate)" "$tmp/bare.txt"; then
  cat "$tmp/bare.txt" >&2
  kit_fail "bundle.mjs did not refuse the bare import with what to do"
fi
npm install --prefer-offline --no-audit --no-fund --loglevel=error fflate@0.8.3 || kit_fail "npm install fflate"
if [ -e node_modules/@bytecodealliance ]; then
  kit_fail "npm install in the bot folder installed the producer"
fi
if sh build.sh; then
  "$ARBITER" check bot.wasm --game tictactoe || kit_fail "arbiter check rejected the bot using fflate"
  "$ARBITER" play tictactoe bot.wasm house:tictactoe-perfect -n 1 --out "$tmp/package-replays" >/dev/null ||
    kit_fail "the bot using fflate could not play"
  grep -rqF '\"name\":\"pkg-bot\"' "$tmp/package-replays" || kit_fail "the bot using fflate did not answer with the name fflate made"
else
  kit_fail "build.sh could not build a bot using an npm package"
fi
cd "$tmp/my-bot"

kit_report "$toolchain"
