"""Exits 0 when two folders of replays (from `arbiter play`) hold the same
moves, turn by turn: a kit's native build against its WebAssembly build,
both played from the same seeds."""
import glob
import json
import os
import sys


def moves(folder):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            replay = json.load(f)
        out.append([[(t["side"], t.get("action"), t.get("fault")) for t in g["turns"]] for g in replay["games"]])
    return out


native, sandboxed = moves(sys.argv[1]), moves(sys.argv[2])
if not native or native != sandboxed:
    print("FAIL: the native build played other moves than bot.wasm from the same seeds", file=sys.stderr)
    sys.exit(1)
turns = sum(len(game) for match in native for game in match)
print(f"native and sandboxed builds played the same {turns} turns")
