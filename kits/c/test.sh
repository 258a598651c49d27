#!/usr/bin/env bash
# CI test of the C kit: builds the template in a temp folder, checks it in
# every mode it claims, plays 2 matches per mode against a house bot, and
# fails on any rejection or any fault of the kit's bot.
#   ARBITER=path/to/arbiter bash kits/c/test.sh   (default: target/debug/arbiter)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ARBITER=${ARBITER:-$root/target/debug/arbiter}
case "$ARBITER" in /*) ;; */*) ARBITER="$PWD/$ARBITER" ;; esac
command -v "$ARBITER" >/dev/null 2>&1 || { echo "FAIL: arbiter binary not found: $ARBITER" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -R "$here/template" "$tmp/my-bot"
rm -f "$tmp/my-bot/bot.wasm"
cd "$tmp/my-bot"

cc=$(command -v clang || command -v clang-14 || true)
[ -n "$cc" ] || { echo "FAIL: clang not found; run kits/c/setup.sh" >&2; exit 1; }
toolchain="$("$cc" --version | head -n1), $(wasm-ld --version 2>/dev/null | head -n1 || echo 'wasm-ld ?'), wasi-libc $(dpkg-query -W -f='${Version}' wasi-libc 2>/dev/null || echo '?')"

start=$(date +%s.%N)
if ! sh build.sh; then echo "FAIL: build.sh failed" >&2; exit 1; fi
end=$(date +%s.%N)
build_s=$(python3 -c "print(f'{$end - $start:.2f}')")
[ -f bot.wasm ] || { echo "FAIL: build.sh produced no bot.wasm" >&2; exit 1; }
size=$(wc -c < bot.wasm | tr -d ' ')

fail=0

# The template's stack flags are there for a reason: `arbiter check` warns
# about the same bot linked with wasm-ld's defaults (64 KiB of C stack
# after the data), and not about the template.
bash "$here/stack-default.sh" "$tmp/default.wasm" >/dev/null
echo "== check of the template built with the default stack"
"$ARBITER" check "$tmp/default.wasm" | tee "$tmp/default.txt"
if ! grep -q "warning: the module's C stack (at most 6[0-9] KiB) sits after its data" "$tmp/default.txt"; then
  echo "FAIL: arbiter check did not warn about a 64 KiB C stack after the data" >&2
  fail=1
fi
if "$ARBITER" check bot.wasm | grep -q "warning: the module's C stack"; then
  echo "FAIL: arbiter check warned about the template's 1 MiB stack placed first" >&2
  fail=1
fi

# The same source built natively plays the same moves from the same seed:
# `arbiter play` hands a native bot ARBITER_RANDOM (the bytes the sandbox's
# random_get would give), and the template's ties are broken at random.
if cc -std=c11 -O2 -o native-bot bot.c arbiter.c 2>"$tmp/native.txt"; then
  "$ARBITER" play othello:std cmd:./native-bot house:othello-random -n 2 --seed 7 --out "$tmp/native" >/dev/null
  "$ARBITER" play othello:std bot.wasm house:othello-random -n 2 --seed 7 --out "$tmp/wasm" >/dev/null
  python3 "$here/../same_moves.py" "$tmp/native" "$tmp/wasm" || fail=1
else
  echo "no native C compiler (cc): the native-vs-sandboxed comparison is skipped" >&2
  cat "$tmp/native.txt" >&2
  if [ -n "${CI:-}" ]; then fail=1; fi
fi

games="tictactoe othello:std othello:anti othello:grand othello:octagon othello:reversi"
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
    print("FAIL: faults of the C template bot:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
then
  fail=1
fi

echo "== kit c"
echo "toolchain: $toolchain"
echo "module size: $size bytes"
echo "build time: $build_s s"
if [ "$fail" -ne 0 ]; then
  echo "FAIL: kits/c test failed" >&2
  exit 1
fi
echo "kits/c: OK"
