#!/usr/bin/env bash
# CI test of the Python kit: installs componentize-py into the kit cache
# (setup.sh; nothing when it is there), builds the template in a temporary
# folder with its one build command, checks the component in every mode it
# claims (skirmish included), plays 2 matches per game against a house bot,
# plays every game natively (`cmd:python3 bot.py`), checks that the native
# run plays the component's moves from the same seeds (Othello,
# tic-tac-toe, skirmish), and fails on any rejection or any fault of the
# kit's bot (see ../lib.sh). A Python component is ~18 MB (a whole CPython)
# and builds in 8-18 s.
#   ARBITER=path/to/arbiter bash kits/python/test.sh   (default: target/debug/arbiter)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
GAMES="$GAMES $("$ARBITER" games --ladders skirmish | tr '\n' ' ')"

bash "$here/setup.sh"
cache=${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}
toolchain="componentize-py $("$cache/python/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("componentize-py"))'), native $(python3 --version)"

kit_start python
kit_build sh build.sh

# The template's moves depend on the request alone, so `python3 bot.py`
# under `arbiter play cmd:` plays what the component plays. Native runs are
# timed by the wall clock: roomy controls keep a slow start-up from
# changing a game.
same_moves_natively 'python3 bot.py'
same_moves_natively 'python3 bot.py' tictactoe house:tictactoe-perfect
same_moves_natively 'python3 bot.py' skirmish house:skirmish-economy 2000/10000
play_natively 'python3 bot.py'

check_every_mode
play_every_game
kit_report "$toolchain"
