# Shared by the kits' CI tests (kits/LANG/test.sh): source it, then
#   kit_start LANG             copy LANG's template into a temporary folder, cd there
#   kit_build CMD...           run the one build command, timed; bot.wasm must appear
#   check_every_mode           `arbiter check bot.wasm` in every mode the templates claim,
#                              accepted and without warnings
#   play_every_game            2 matches per game against a house bot, replays kept
#   same_moves_natively CMD    the native build CMD plays bot.wasm's moves from the same seeds
#   kit_report TOOLCHAIN       faults of the kit's bot (any fails), fuel per Othello move,
#                              toolchain, module size, build time; exits 1 on any failure
# ARBITER names the binary (default target/debug/arbiter).

kits_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ARBITER=${ARBITER:-$kits_dir/../target/debug/arbiter}
case "$ARBITER" in /*) ;; */*) ARBITER="$PWD/$ARBITER" ;; esac
command -v "$ARBITER" >/dev/null 2>&1 || { echo "FAIL: arbiter binary not found: $ARBITER" >&2; exit 1; }
# Every mode of the games the templates play, as the binary lists them.
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
  cd "$tmp/my-bot"
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

play_every_game() {
  local g opponent
  for g in $GAMES; do
    case "$g" in
      tictactoe:*) opponent=house:tictactoe-perfect ;;
      *) opponent=house:othello-greedy ;;
    esac
    echo "== play $g against $opponent"
    "$ARBITER" play "$g" bot.wasm "$opponent" -n 2 --out "$tmp/replays/${g/:/-}" || kit_fail "arbiter play $g failed"
  done
}

same_moves_natively() {
  "$ARBITER" play othello "cmd:$1" house:othello-random -n 2 --seed 7 --out "$tmp/native" >/dev/null ||
    kit_fail "the native build could not play"
  "$ARBITER" play othello bot.wasm house:othello-random -n 2 --seed 7 --out "$tmp/wasm" >/dev/null ||
    kit_fail "bot.wasm could not play"
  python3 "$kits_dir/support/same_moves.py" "$tmp/native" "$tmp/wasm" || kit_fail "the native build played other moves"
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
