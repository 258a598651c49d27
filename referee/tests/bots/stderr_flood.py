"""Writes 200 KB to stderr, then replies to each request."""
import sys

sys.stderr.write(("log line padding padding padding padding padding\n") * 4000)
sys.stderr.flush()
for line in sys.stdin:
    print('{"ok":true}', flush=True)
