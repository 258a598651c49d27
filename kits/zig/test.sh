#!/usr/bin/env bash
# CI test of the Zig kit: builds the template in a temp folder with its one
# build command, checks it in every mode it claims, plays 2 matches per game
# against a house bot, fails on any rejection or fault of the kit's bot, and
# prints toolchain, module size, build time and fuel per Othello move.
# Usage: ARBITER=path/to/arbiter bash kits/zig/test.sh   (from any cwd)
set -euo pipefail

KIT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$KIT_DIR/../.." && pwd)
ARBITER=${ARBITER:-$REPO_ROOT/target/debug/arbiter}
case "$ARBITER" in
    /*) ;;
    */*) ARBITER="$(pwd)/$ARBITER" ;;
    *) ARBITER=$(command -v "$ARBITER" || echo "$ARBITER") ;;
esac

fail() {
    echo "zig kit: FAIL: $*" >&2
    exit 1
}

[ -x "$ARBITER" ] || fail "no arbiter binary at $ARBITER (set ARBITER)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-zig-kit.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cp -R "$KIT_DIR/template/." "$WORK/my-bot"
cd "$WORK/my-bot"

TOOLCHAIN=$(sh build.sh --version) || fail "no Zig toolchain (run kits/zig/setup.sh)"
echo "zig kit: toolchain: $TOOLCHAIN"

start=$(date +%s.%N)
sh build.sh || fail "build.sh failed"
end=$(date +%s.%N)
BUILD_SECONDS=$(python3 -c "print(f'{$end - $start:.2f}')")
[ -f bot.wasm ] || fail "build.sh did not produce bot.wasm"
SIZE=$(wc -c < bot.wasm)
SHA=$(sha256sum bot.wasm | cut -d' ' -f1)

GAMES="tictactoe othello:std othello:anti othello:grand othello:octagon othello:reversi"

for game in $GAMES; do
    if ! out=$("$ARBITER" check bot.wasm --game "$game" 2>&1); then
        echo "$out" >&2
        fail "arbiter check rejected the template in $game"
    fi
    echo "zig kit: check $game: $(echo "$out" | grep -m1 -E '^(accepted|rejected)' || echo "$out" | head -1)"
    echo "zig kit:   $(echo "$out" | grep -m1 'smoke match against' || true)"
done

# The native build plays the same moves from the same seeds (`arbiter play`
# hands it ARBITER_RANDOM; the template breaks ties at random).
sh build.sh --native >/dev/null || fail "build.sh --native failed"
"$ARBITER" play othello:std cmd:./native-bot house:othello-random -n 2 --seed 7 --out "$WORK/native" >/dev/null ||
    fail "the native build could not play"
"$ARBITER" play othello:std bot.wasm house:othello-random -n 2 --seed 7 --out "$WORK/wasm" >/dev/null ||
    fail "bot.wasm could not play"
python3 "$KIT_DIR/../same_moves.py" "$WORK/native" "$WORK/wasm" | sed 's/^/zig kit: /' ||
    fail "the native build played other moves than bot.wasm"

for game in $GAMES; do
    case "$game" in
        tictactoe) house=house:tictactoe-perfect ;;
        *) house=house:othello-greedy ;;
    esac
    out_dir="$WORK/replays/${game//:/-}"
    if ! out=$("$ARBITER" play "$game" bot.wasm "$house" -n 2 --out "$out_dir" 2>&1); then
        echo "$out" >&2
        fail "arbiter play $game failed"
    fi
    echo "zig kit: play $game vs $house:"
    echo "$out" | sed -n '/^bot /,/^Elo/p' | sed 's/^/zig kit:   /'
done

# Faults of the kit's bot (participant 0) and its fuel per Othello move.
python3 - "$WORK/replays" <<'PY' || fail "the template bot faulted (see above)"
import glob, json, os, sys

root = sys.argv[1]
faults = []
fuel = moves = 0
for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
    replay = json.load(open(path))
    for game in replay["games"]:
        ours = [side for side in (0, 1) if game["sides"][side] == 0]
        if game.get("faulted") in ours:
            faults.append(f"{path}: game {game['index']}: {game['reason']}: {game.get('detail', '')}")
        for turn in game["turns"]:
            if turn["side"] not in ours:
                continue
            if turn.get("fault"):
                faults.append(f"{path}: game {game['index']}: turn fault {turn['fault']}")
            if replay["game"] == "othello":
                fuel += turn["spent"]["fuel"]
                moves += 1
for f in faults:
    print("zig kit: FAULT:", f, file=sys.stderr)
if moves == 0:
    print("zig kit: no Othello moves of the template bot in the replays", file=sys.stderr)
    sys.exit(1)
print(f"zig kit: average fuel per Othello move: {fuel // moves} ({moves} moves, all five modes)")
sys.exit(1 if faults else 0)
PY

echo "zig kit: module size: $SIZE bytes (sha256 $SHA)"
echo "zig kit: build time: $BUILD_SECONDS s"
echo "zig kit: OK"
