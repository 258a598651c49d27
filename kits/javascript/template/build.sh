#!/bin/sh
# Builds bot.wasm, a WASI 0.2 command component, with componentize-js 0.23.0
# from the kit cache (bash setup.sh installs it there, once per user).
# componentize-js takes one ES module: bundle.mjs makes it from component.js,
# bot.js and arbiter.js, with io-wasi.js (the WASI streams) in io.js's place
# (Node's), and bundles in the npm packages the bot imports (installed here
# with `npm install PACKAGE`) with the producer's rolldown. The world is
# wit/bot.wit: `bot`, importing stdin, stdout and stderr, exporting
# wasi:cli/run@0.2.12. `-d http fetch-event` leaves out the runtime's HTTP
# and fetch-event support, whose wasi:http imports the sandbox refuses. The
# component holds a whole SpiderMonkey, so it is ~13 MB.
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
node bundle.mjs component.js --wasi --rolldown "$cache/javascript/node_modules/rolldown" > build/bot.js
rm -f bot.wasm.partial
# componentize-js runs the module's top level at build time, with no host:
# a call there that needs one (randomness, a clock) stops the build with a
# trap that names a WASI import; say which JavaScript call that is.
if ! "$tool" --wit wit --world-name bot -d http fetch-event -o bot.wasm.partial build/bot.js > build/componentize.log 2>&1; then
  import=$(grep -o "imported function[^']*'wasi:[a-z]*/[a-z-]*@[0-9.]*' '[a-z0-9-]*'" build/componentize.log | head -n 1 | sed "s/^imported function[^']*//")
  case "$import" in
    *wasi:random*) calls="Math.random(), crypto.getRandomValues() or the kit's rng() (the import $import)" ;;
    *wasi:clocks*) calls="Date.now(), new Date(), performance.now() or a Clock (the import $import)" ;;
    *) calls="Date.now(), new Date() or performance.now() (the clocks), or Math.random(), crypto.getRandomValues() or rng()" ;;
  esac
  if [ -n "$import" ] || grep -q "componentize.wizer. function trapped\|during Wizer initialization" build/componentize.log; then
    [ -n "$import" ] || cat build/componentize.log >&2
    echo "build.sh: bot.wasm was not built: the top level of a module runs at build time, where there is no host, and code there called $calls." >&2
    echo "build.sh: make random generators and read clocks inside a method (othello, tictactoe, onTick) or a function it calls; tables that need neither are free at the top level." >&2
  else
    cat build/componentize.log >&2
  fi
  exit 1
fi
mv bot.wasm.partial bot.wasm
echo "built bot.wasm ($(wc -c < bot.wasm | tr -d ' ') bytes)"
