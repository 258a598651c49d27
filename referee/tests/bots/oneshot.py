"""Reads one request, replies with its own pid and the request, and exits 0."""
import json
import os
import sys

request = sys.stdin.readline().rstrip("\n")
print(json.dumps({"pid": os.getpid(), "req": request}), flush=True)
