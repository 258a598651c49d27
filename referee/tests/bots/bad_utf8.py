"""Replies with bytes that are not UTF-8."""
import sys

sys.stdin.readline()
sys.stdout.buffer.write(b'{"move":"\xff\xfe"}\n')
sys.stdout.flush()
sys.stdin.readline()
