"""Starts a child that sleeps (to check the process group is killed), writes
its pid to stderr, then never replies."""
import subprocess
import sys
import time

child = subprocess.Popen(["sleep", "30"])
sys.stderr.write(f"child {child.pid}\n")
sys.stderr.flush()
sys.stdin.readline()
while True:
    time.sleep(60)
