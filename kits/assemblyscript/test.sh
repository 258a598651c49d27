#!/usr/bin/env bash
# CI test of the AssemblyScript kit: builds the template in a temporary folder
# with its one build command, runs `arbiter check` in every mode the template
# claims, plays 2 matches against a house bot in each, and fails on any
# rejection or any fault of the kit's bot. Run after setup.sh, from any folder:
#   ARBITER=/path/to/arbiter bash kits/assemblyscript/test.sh
set -euo pipefail

KIT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$KIT_DIR/../.." && pwd)"
ARBITER="${ARBITER:-target/debug/arbiter}"
case "$ARBITER" in
  /*) ;;
  *) ARBITER="$REPO_ROOT/$ARBITER" ;;
esac
if [ ! -x "$ARBITER" ]; then
  echo "FAIL: no arbiter binary at $ARBITER (build it, or set ARBITER)" >&2
  exit 1
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/arbiter-kit-assemblyscript.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
BOT_DIR="$WORK/my-bot"
cp -R "$KIT_DIR/template" "$BOT_DIR"

echo "== assemblyscript kit: building the template in $BOT_DIR"
start=$(date +%s.%N)
if ! (cd "$BOT_DIR" && sh build.sh); then
  echo "FAIL: the template does not build (sh build.sh)" >&2
  exit 1
fi
end=$(date +%s.%N)
build_seconds=$(python3 -c "print(f'{$end - $start:.1f}')")
# A second build, with the compiler already installed: the edit-build loop.
start=$(date +%s.%N)
(cd "$BOT_DIR" && sh build.sh >/dev/null)
end=$(date +%s.%N)
rebuild_seconds=$(python3 -c "print(f'{$end - $start:.1f}')")

WASM="$BOT_DIR/bot.wasm"
[ -s "$WASM" ] || { echo "FAIL: build.sh produced no bot.wasm" >&2; exit 1; }
size=$(wc -c < "$WASM" | tr -d ' ')
asc_version=$("$BOT_DIR/node_modules/.bin/asc" --version | head -n 1)
shim_version=$(node -p "require('$BOT_DIR/node_modules/@assemblyscript/wasi-shim/package.json').version")

failures=0
games=(tictactoe othello:std othello:anti othello:grand othello:octagon othello:reversi)

echo "== arbiter check"
for game in "${games[@]}"; do
  if out=$("$ARBITER" check "$WASM" --game "$game" 2>&1); then
    echo "$game: $(echo "$out" | grep -m1 -E '^(accepted|rejected)' || echo "$out" | tail -n 1)"
  else
    echo "$out" >&2
    echo "FAIL: arbiter check rejected the template bot on $game" >&2
    failures=$((failures + 1))
  fi
done

echo "== arbiter play (2 matches each, kit bot is participant 0)"
REPLAYS="$WORK/replays"
for game in "${games[@]}"; do
  case "$game" in
    tictactoe) opponent=house:tictactoe-perfect ;;
    *) opponent=house:othello-greedy ;;
  esac
  out_dir="$REPLAYS/${game//:/-}"
  if ! "$ARBITER" play "$game" "$WASM" "$opponent" -n 2 --out "$out_dir" > "$WORK/play.txt" 2>&1; then
    cat "$WORK/play.txt" >&2
    echo "FAIL: arbiter play $game failed" >&2
    failures=$((failures + 1))
    continue
  fi
  echo "--- $game vs $opponent"
  grep -v '^replays:' "$WORK/play.txt" || true
done

# Faults of the kit's bot (participant 0) and its fuel per Othello move.
if ! python3 - "$REPLAYS" <<'EOF'
import glob, json, os, sys

root = sys.argv[1]
faults = []
fuel = moves = 0
for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
    replay = json.load(open(path))
    for game in replay["games"]:
        sides = game["sides"]
        ours = sides.index(0)
        if game.get("faulted") is not None and sides[game["faulted"]] == 0:
            faults.append(f"{path}: game {game['index']}: {game['reason']}: {game.get('detail', '')}")
        for turn in game["turns"]:
            if turn["side"] != ours:
                continue
            if turn.get("fault"):
                faults.append(f"{path}: game {game['index']}: turn fault {turn['fault']}")
            if replay["game"] == "othello":
                fuel += turn["spent"]["fuel"]
                moves += 1
for fault in faults:
    print("FAULT:", fault, file=sys.stderr)
if moves == 0:
    print("FAIL: no Othello move of the kit bot found in the replays", file=sys.stderr)
    sys.exit(1)
print(f"fuel per Othello move (average over {moves} moves): {fuel // moves}")
sys.exit(1 if faults else 0)
EOF
then
  echo "FAIL: the template bot faulted in a game (see FAULT lines above)" >&2
  failures=$((failures + 1))
fi

echo "== assemblyscript kit summary"
echo "toolchain: node $(node --version), npm $(npm --version), assemblyscript $asc_version, @assemblyscript/wasi-shim $shim_version"
echo "module size: $size bytes (sha256 $(sha256sum "$WASM" | cut -d' ' -f1))"
echo "build time: ${build_seconds} s (fresh folder, incl. npm ci), ${rebuild_seconds} s (rebuild)"
if [ "$failures" -ne 0 ]; then
  echo "FAIL: assemblyscript kit: $failures failure(s)" >&2
  exit 1
fi
echo "assemblyscript kit: OK"
