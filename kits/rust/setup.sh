#!/usr/bin/env bash
# Installs the Rust kit's toolchain for the current user: Rust >= 1.95 (the
# SDK is edition 2024 and uses 1.95's standard library) with the
# wasm32-wasip1 target. With rustup (https://rustup.rs) on PATH it adds the
# target (`rustup target add wasm32-wasip1`) and updates an older stable;
# without rustup it installs it from https://sh.rustup.rs into ~/.cargo and
# ~/.rustup (no root needed). Does nothing, quietly, when cargo and the
# target are there.
set -euo pipefail
MIN_MINOR=95

have_rust() {
  command -v cargo >/dev/null 2>&1 && command -v rustc >/dev/null 2>&1 || return 1
  local minor
  minor=$(rustc --version | sed -n 's/^rustc 1\.\([0-9]*\).*/\1/p')
  [ -n "$minor" ] && [ "$minor" -ge "$MIN_MINOR" ] || return 1
  [ -d "$(rustc --print sysroot)/lib/rustlib/wasm32-wasip1" ]
}
if have_rust; then
  exit 0
fi
if ! command -v rustup >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/rustup" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v rustup >/dev/null 2>&1; then
  command -v curl >/dev/null 2>&1 || { echo "setup.sh: curl is needed to install rustup (Debian: apt-get install curl)" >&2; exit 1; }
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --target wasm32-wasip1
  export PATH="$HOME/.cargo/bin:$PATH"
fi
minor=$(rustc --version 2>/dev/null | sed -n 's/^rustc 1\.\([0-9]*\).*/\1/p')
if [ -z "$minor" ] || [ "$minor" -lt "$MIN_MINOR" ]; then
  rustup toolchain install stable --profile minimal
  rustup default stable
fi
rustup target add wasm32-wasip1
have_rust || { echo "setup.sh: cargo with the wasm32-wasip1 target is still missing" >&2; exit 1; }
echo "rust kit: $(rustc --version) with wasm32-wasip1 (open a new shell, or: . \"\$HOME/.cargo/env\")"
