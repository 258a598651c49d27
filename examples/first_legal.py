"""A minimal Othello bot: plays the first legal move, passes when it must.

Try it:  arbiter play othello cmd:'python3 examples/first_legal.py' builtin:random
"""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    legal = request["legal_moves"]
    print(json.dumps({"move": legal[0] if legal else "pass"}), flush=True)
