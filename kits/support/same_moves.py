"""Exits 0 when two folders of replays (from `arbiter play`) hold the same
moves, turn by turn (skirmish: the same actions, rejections and skipped
ticks, tick by tick): a kit's native build against its WebAssembly build,
both played from the same seeds."""
import glob
import json
import os
import sys


def ticks(game):
    """A skirmish game's ticks: per side, what was accepted, rejected, skipped."""
    record = (game.get("record") or {}).get("game")
    if not isinstance(record, dict) or "ticks" not in record:
        return []
    return [[(s.get("accepted"), s.get("rejected"), s.get("skipped")) for s in t["sides"]] for t in record["ticks"]]


def moves(folder):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path) as f:
            replay = json.load(f)
        out.append([([(t["side"], t.get("action"), t.get("fault")) for t in g["turns"]], ticks(g)) for g in replay["games"]])
    return out


def first_difference(native, sandboxed):
    """Where the two runs part: match, game and turn (or tick), each side's entry."""
    if len(native) != len(sandboxed):
        return f"{len(native)} native replays, {len(sandboxed)} sandboxed"
    for m, (a, b) in enumerate(zip(native, sandboxed), 1):
        if len(a) != len(b):
            return f"match {m}: {len(a)} native games, {len(b)} sandboxed"
        for g, ((ta, ka), (tb, kb)) in enumerate(zip(a, b), 1):
            for label, x, y in (("turn", ta, tb), ("tick", ka, kb)):
                for i in range(max(len(x), len(y))):
                    ex = x[i] if i < len(x) else "(none)"
                    ey = y[i] if i < len(y) else "(none)"
                    if ex != ey:
                        return f"match {m}, game {g}, {label} {i}: native {ex}, sandboxed {ey}"
    return "no replays"


native, sandboxed = moves(sys.argv[1]), moves(sys.argv[2])
if not native or native != sandboxed:
    print("FAIL: the native build played other moves than bot.wasm from the same seeds"
          f" ({first_difference(native, sandboxed)})", file=sys.stderr)
    sys.exit(1)
turns = sum(len(turns) for match in native for turns, _ in match)
ticks_played = sum(len(ticks) for match in native for _, ticks in match)
print(f"native and sandboxed builds played the same {turns} turns" + (f" and {ticks_played} skirmish ticks" if ticks_played else ""))
