#!/bin/sh
# Builds bot.wasm, a WASI 0.2 command component, from component.py (which
# runs bot.py's bot) with componentize-py 0.25.1 from the kit cache (bash
# setup.sh installs it there). The world is wit/bot.wit: `bot`, which
# includes wasi:cli/command@0.2.12. Every module this folder's code imports
# (the arbiter package, the standard library modules used) goes in; the
# component holds a whole CPython, so it is ~18 MB.
#   sh build.sh
set -eu
cd "$(dirname "$0")"
cache=${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}
tool=$cache/python/venv/bin/componentize-py
if [ ! -x "$tool" ]; then
  echo "build.sh: componentize-py not found in $cache/python/venv: run bash setup.sh first" >&2
  exit 1
fi
rm -f bot.wasm.partial
# -p .: modules are looked for in this folder (besides the standard library
# and an activated venv's site-packages).
"$tool" -d wit -w bot componentize component -p . -o bot.wasm.partial
# Names the producer in a `producers` section, so `arbiter check` and the
# site can say "Python (componentize-py 0.25.1)" (componentize-py names
# itself nowhere).
"$cache/python/venv/bin/python" - bot.wasm.partial <<'EOF'
import importlib.metadata
import sys


def leb(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def name(text):
    data = text.encode()
    return leb(len(data)) + data


version = importlib.metadata.version("componentize-py")
fields = [("language", [("Python", "")]), ("processed-by", [("componentize-py", version)])]
body = leb(len(fields)) + b"".join(
    name(field) + leb(len(values)) + b"".join(name(n) + name(v) for n, v in values)
    for field, values in fields
)
section = name("producers") + body
with open(sys.argv[1], "ab") as out:
    out.write(b"\x00" + leb(len(section)) + section)
EOF
mv bot.wasm.partial bot.wasm
echo "built bot.wasm ($(wc -c < bot.wasm | tr -d ' ') bytes)"
