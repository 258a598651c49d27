#!/bin/sh
# Builds bot.wasm, a WASI 0.2 command component, with componentize-js 0.23.0
# from the kit cache (bash setup.sh installs it there). componentize-js takes
# one ES module: bundle.mjs makes it from component.js, bot.js and
# arbiter.js, with io-wasi.js (the WASI streams) in io.js's place (Node's).
# The world is wit/bot.wit: `bot`, importing stdin, stdout and stderr,
# exporting wasi:cli/run@0.2.12. `-d http fetch-event` leaves out the
# runtime's HTTP and fetch-event support, whose wasi:http imports the
# sandbox refuses. The component holds a whole SpiderMonkey, so it is ~13 MB.
#   sh build.sh
set -eu
cd "$(dirname "$0")"
cache=${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}
tool=$cache/javascript/node_modules/.bin/componentize-js
if [ ! -x "$tool" ]; then
  echo "build.sh: componentize-js not found in $cache/javascript/node_modules: run bash setup.sh first" >&2
  exit 1
fi
mkdir -p build
node bundle.mjs component.js --wasi > build/bot.js
rm -f bot.wasm.partial
"$tool" --wit wit --world-name bot -d http fetch-event -o bot.wasm.partial build/bot.js
mv bot.wasm.partial bot.wasm
echo "built bot.wasm ($(wc -c < bot.wasm | tr -d ' ') bytes)"
