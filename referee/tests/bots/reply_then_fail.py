"""Replies once, then exits with status 3: a crash, noticed at its next turn."""
import sys

sys.stdin.readline()
print('{"ok":true}', flush=True)
sys.exit(3)
