"""Loops: one reply line per request, numbered, with the game and mode.

A request `sleep:SECONDS` sleeps that long before replying; a request `crlf`
gets its reply terminated by CRLF.
"""
import json
import os
import sys
import time

turn = 0
for line in sys.stdin:
    request = line.rstrip("\n")
    turn += 1
    if request.startswith("sleep:"):
        time.sleep(float(request[len("sleep:"):]))
    reply = json.dumps({
        "turn": turn,
        "req": request,
        "game": os.environ.get("ARBITER_GAME"),
        "mode": os.environ.get("ARBITER_MODE"),
    })
    end = "\r\n" if request == "crlf" else "\n"
    sys.stdout.write(reply + end)
    sys.stdout.flush()
