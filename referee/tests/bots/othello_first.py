"""An Othello bot that plays its first legal move, and misbehaves at its third
move when it plays the given colour.

usage: othello_first.py FAULT COLOUR
  FAULT  none | crash | hang | garbage | illegal | exit | pass
  COLOUR black | white
"""
import json
import sys
import time

fault = sys.argv[1] if len(sys.argv) > 1 else "none"
colour = {"black": 1, "white": 2}.get(sys.argv[2] if len(sys.argv) > 2 else "black")
moves = 0
for line in sys.stdin:
    request = json.loads(line)
    moves += 1
    if fault != "none" and request["color"] == colour and moves == 3:
        if fault == "crash":
            raise RuntimeError("deliberate crash")
        if fault == "hang":
            while True:
                time.sleep(60)
        if fault == "garbage":
            print("I think d3 is nice", flush=True)
            continue
        if fault == "illegal":
            occupied = [i for i, cell in enumerate(request["board"]) if cell != 0]
            print(json.dumps({"move": occupied[0]}), flush=True)
            continue
        if fault == "exit":
            sys.exit(3)
        if fault == "pass":
            print(json.dumps({"move": "pass"}), flush=True)
            continue
    legal = request["legal_moves"]
    print(json.dumps({"move": legal[0] if legal else "pass"}), flush=True)
