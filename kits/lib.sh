# shellcheck shell=bash
# Shared by the kits' CI tests (kits/LANG/test.sh): source it, then
#   kit_start LANG             copy LANG's template into a temporary folder, cd there
#   kit_build CMD...           run the one build command, timed; bot.wasm must appear
#   check_every_mode           `arbiter check bot.wasm` in every mode the templates claim,
#                              accepted and without warnings
#   play_every_game            2 matches per game against a house bot, replays kept
#   play_natively CMD          1 match per game of the native program CMD (`cmd:` bots)
#                              against the same house bots; any fault of it fails
#   same_moves_natively CMD [GAME [OPPONENT [TIME]]]
#                              the native build CMD plays bot.wasm's moves from the same seeds
#                              (default: othello against house:othello-random; TIME: a roomy
#                              control for a native bot, native_control GAME, for both)
#   kit_report TOOLCHAIN       faults of the kit's bot (any fails), fuel per Othello move,
#                              toolchain, module size, build time; exits 1 on any failure
# ARBITER names the binary (default target/debug/arbiter).

kits_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ARBITER=${ARBITER:-$kits_dir/../target/debug/arbiter}
case "$ARBITER" in /*) ;; */*) ARBITER="$PWD/$ARBITER" ;; esac
command -v "$ARBITER" >/dev/null 2>&1 || { echo "FAIL: arbiter binary not found: $ARBITER" >&2; exit 1; }
# Every mode of the games the templates play, as the binary lists them (a
# kit whose template plays skirmish too adds it after sourcing this file).
GAMES=$("$ARBITER" games --ladders tictactoe othello | tr '\n' ' ')
[ -n "$GAMES" ] || { echo "FAIL: arbiter games listed no ladders" >&2; exit 1; }
kit_failed=0

# Records a failure (the test goes on, and fails at the end).
kit_fail() {
  echo "FAIL: $*" >&2
  kit_failed=1
}

kit_start() {
  kit=$1
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-kit-$kit.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp -R "$kits_dir/$kit/template" "$tmp/my-bot"
  rm -f "$tmp/my-bot/bot.wasm"
  cd "$tmp/my-bot" || exit 1
}

kit_build() {
  local start end
  start=$(date +%s.%N)
  "$@" || { echo "FAIL: the template does not build ($*)" >&2; exit 1; }
  end=$(date +%s.%N)
  build_s=$(python3 -c "print(f'{$end - $start:.2f}')")
  [ -s bot.wasm ] || { echo "FAIL: the build produced no bot.wasm" >&2; exit 1; }
}

check_every_mode() {
  local g
  for g in $GAMES; do
    echo "== check $g"
    "$ARBITER" check bot.wasm --game "$g" | tee "$tmp/check.txt" || kit_fail "arbiter check rejected the template in $g"
    # The templates are built right: no advice is due.
    if grep -q "^warning:" "$tmp/check.txt"; then
      kit_fail "arbiter check warned about the template in $g"
    fi
  done
}

# The house bot each game's template plays against.
opponent_for() {
  case "$1" in
    tictactoe:*) echo house:tictactoe-perfect ;;
    skirmish:*) echo house:skirmish-economy ;;
    *) echo house:othello-greedy ;;
  esac
}

play_every_game() {
  local g opponent
  for g in $GAMES; do
    opponent=$(opponent_for "$g")
    echo "== play $g against $opponent"
    "$ARBITER" play "$g" bot.wasm "$opponent" -n 2 --out "$tmp/replays/${g/:/-}" || kit_fail "arbiter play $g failed"
  done
}

# A roomy wall-clock control for a native bot in GAME: an interpreter's
# start-up (Python, Node: 50-300 ms idle, seconds on a busy machine) falls
# in its first move, and would exceed tic-tac-toe's 100 ms per turn and
# even Othello's 1 s; skirmish's second number is tick 0's budget. The
# kits' tests run beside the browser tests and the API fuzzing on 2 cores,
# where `node bot.js` once took over 1 s to answer tic-tac-toe's first
# request (a timeout: other moves than bot.wasm's): 10 s per move. A bot
# that answers early ends its turn early, so room costs nothing.
native_control() {
  case "$1" in
    tictactoe*) echo 10000/30000 ;;
    skirmish*) echo 200/5000 ;;
    *) echo 10000/60000 ;;
  esac
}

play_natively() {
  local g opponent control
  for g in $GAMES; do
    opponent=$(opponent_for "$g")
    control=(--time "$(native_control "$g")")
    echo "== play $g natively (cmd:$1) against $opponent"
    "$ARBITER" play "$g" "cmd:$1" "$opponent" -n 1 "${control[@]}" --out "$tmp/native-replays/${g/:/-}" ||
      kit_fail "arbiter play $g cmd:$1 failed"
  done
  python3 "$kits_dir/support/replays.py" "$tmp/native-replays" >/dev/null || kit_fail "the native $kit template bot faulted"
}

same_moves_natively() {
  local game=${2:-othello} opponent=${3:-house:othello-random} out
  local control=(--time "${4:-$(native_control "$game")}")
  out="$tmp/same-${game/:/-}"
  "$ARBITER" play "$game" "cmd:$1" "$opponent" -n 2 --seed 7 "${control[@]}" --out "$out/native" >/dev/null ||
    kit_fail "the native build could not play $game"
  "$ARBITER" play "$game" bot.wasm "$opponent" -n 2 --seed 7 "${control[@]}" --out "$out/wasm" >/dev/null ||
    kit_fail "bot.wasm could not play $game"
  python3 "$kits_dir/support/same_moves.py" "$out/native" "$out/wasm" || kit_fail "the native build played other moves in $game"
}

kit_report() {
  python3 "$kits_dir/support/replays.py" "$tmp/replays" || kit_fail "the $kit template bot faulted"
  echo "== kit $kit"
  echo "toolchain: $1"
  echo "module size: $(wc -c < bot.wasm | tr -d ' ') bytes"
  echo "build time: $build_s s"
  if [ "$kit_failed" -ne 0 ]; then
    echo "FAIL: kits/$kit test failed" >&2
    exit 1
  fi
  echo "kits/$kit: OK"
}
