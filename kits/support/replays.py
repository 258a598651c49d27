"""Reads the replays `arbiter play` wrote under a folder (one subfolder per
game) with a kit's bot as participant 0: prints its fuel per Othello move
(per mode and on average) and exits 1, naming them, on any fault of it."""
import glob
import json
import os
import sys

root = sys.argv[1]
files = sorted(glob.glob(os.path.join(root, "*", "*.json")))
if not files:
    print("FAIL: no replays written", file=sys.stderr)
    sys.exit(1)
bad, per_mode = [], {}
for path in files:
    with open(path) as f:
        replay = json.load(f)
    where = os.path.relpath(path, root)
    for game in replay["games"]:
        if game.get("faulted") is not None and game["sides"][game["faulted"]] == 0:
            bad.append(f"{where} game {game['index']}: {game['reason']} {game.get('detail', '')}")
        for turn in game["turns"]:
            if game["sides"][turn["side"]] != 0:
                continue
            if turn.get("fault"):
                bad.append(f"{where} game {game['index']}: turn fault {turn['fault']}")
            if replay["game"] == "othello":
                fuel_moves = per_mode.setdefault(replay["mode"], [0, 0])
                fuel_moves[0] += turn["spent"].get("fuel", 0)
                fuel_moves[1] += 1
for mode, (fuel, moves) in sorted(per_mode.items()):
    print(f"fuel per Othello move ({mode}): {fuel // max(moves, 1)} over {moves} moves")
fuel = sum(f for f, _ in per_mode.values())
moves = sum(n for _, n in per_mode.values())
print(f"average fuel per Othello move: {fuel // max(moves, 1)} over {moves} moves")
if bad:
    print("FAIL: faults of the template bot:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
