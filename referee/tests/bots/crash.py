"""Reads a request and raises before replying."""
import sys

sys.stdin.readline()
raise RuntimeError("boom")
