#!/usr/bin/env bash
# CI test of the JavaScript kit: installs componentize-js into the kit cache
# (setup.sh; nothing when it is there), builds the template in a temporary
# folder with its one build command, checks the component in every mode it
# claims (skirmish included), plays 2 matches per game against a house bot,
# plays every game natively (`cmd:node bot.js`), checks that the native
# run plays the component's moves from the same seeds (Othello,
# tic-tac-toe, skirmish), and fails on any rejection or any fault of the
# kit's bot (see ../lib.sh). A JavaScript component is ~13 MB (a whole
# SpiderMonkey) and builds in 7-14 s.
#   ARBITER=path/to/arbiter bash kits/javascript/test.sh   (default: target/debug/arbiter)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
GAMES="$GAMES $("$ARBITER" games --ladders skirmish | tr '\n' ' ')"

bash "$here/setup.sh"
cache=${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}
toolchain="componentize-js $(node -p "require('$cache/javascript/node_modules/@bytecodealliance/componentize-js/package.json').version"), node $(node --version)"

kit_start javascript
# `node bot.js` needs the kit's package.json ("type": "module"), which
# `arbiter new` writes beside the template's files.
cp "$here/package.json" "$here/package-lock.json" .
kit_build sh build.sh

# The template's moves depend on the request alone, so `node bot.js`
# under `arbiter play cmd:` plays what the component plays. Native runs are
# timed by the wall clock: roomy controls keep a slow start-up from
# changing a game (a skirmish tick of 200 ms was once overrun on a busy
# 2-core machine: a skipped tick is another game). A bot that answers
# early ends its tick early, so a roomy control costs nothing.
same_moves_natively 'node bot.js'
same_moves_natively 'node bot.js' tictactoe house:tictactoe-perfect 1000/5000
same_moves_natively 'node bot.js' skirmish house:skirmish-economy 2000/10000
play_natively 'node bot.js'

check_every_mode
play_every_game
kit_report "$toolchain"
