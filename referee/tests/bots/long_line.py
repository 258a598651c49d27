"""Writes 100 KB without a newline, then waits."""
import sys
import time

sys.stdin.readline()
sys.stdout.write("x" * 100_000)
sys.stdout.flush()
time.sleep(30)
