#!/bin/sh
# Builds bot.wasm, a WASI preview 1 command module, with cargo and the
# wasm32-wasip1 target (bash setup.sh adds it). The SDK and the rules are
# the path dependencies in arbiter/; Cargo.lock pins the crates.io crates
# they use to the versions the referee is built with.
#   sh build.sh
set -eu
cd "$(dirname "$0")"
command -v cargo >/dev/null 2>&1 || { echo "build.sh: cargo not found: run bash setup.sh first" >&2; exit 1; }
cargo build --release --target wasm32-wasip1
name=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
cp "target/wasm32-wasip1/release/$name.wasm" bot.wasm
echo "built bot.wasm ($(wc -c < bot.wasm | tr -d ' ') bytes)"
