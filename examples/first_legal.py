"""A minimal Othello bot: plays the first legal move, passes when it must.

Try it (native bots are timed by the wall clock: Python's start-up on a busy
machine can take most of a second, so give it a roomy time control):
  arbiter play othello cmd:'python3 examples/first_legal.py' house:othello-random --time 5000/60000
"""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    legal = request["legal_moves"]
    print(json.dumps({"move": legal[0] if legal else "pass"}), flush=True)
