#!/usr/bin/env bash
# CI test of the Rust kit, as a newcomer gets it: with a copy of the arbiter
# binary alone in a folder outside the sources, `arbiter new rust x-bot`
# (the SDK and the rules come inside the folder), `bash setup.sh`, then
# `cargo build --release --target wasm32-wasip1` with the network off
# (CARGO_NET_OFFLINE: after a `cargo fetch`, which needs crates.io only
# when the shared registry cache lacks a crate of Cargo.lock) and
# `arbiter check`. Then the module is checked in every mode the template
# claims, plays 2 matches per game against a house bot, and the native
# build (`cargo build --release`) plays the same moves from the same seeds;
# any rejection or fault of the kit's bot fails (see ../lib.sh).
#   ARBITER=path/to/arbiter bash kits/rust/test.sh   (default: target/debug/arbiter)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/arbiter-kit-rust.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
kit=rust
outside="$tmp/outside"
mkdir -p "$outside/bin" "$outside/work"
cp "$ARBITER" "$outside/bin/arbiter"
export PATH="$outside/bin:$PATH"
cd "$outside/work"
echo "== outside the sources: arbiter new rust x-bot && cd x-bot && bash setup.sh"
arbiter new rust x-bot || { echo "FAIL: arbiter new rust x-bot" >&2; exit 1; }
cd x-bot
cp Cargo.lock "$tmp/kit.lock"
cmp -s KIT-README.md "$here/README.md" || kit_fail "arbiter new did not write the kit's whole README as KIT-README.md"
if grep -rq "workspace = true\|\.workspace" arbiter/*/Cargo.toml; then
  kit_fail "a vendored Cargo.toml still inherits from a workspace"
fi
bash setup.sh || { echo "FAIL: setup.sh" >&2; exit 1; }
toolchain="$(rustc --version), $(cargo --version)"
# Outside /work/main, so no rust-toolchain.toml applies: the user's default.
host=$(rustc -vV | sed -n 's/^host: //p')
cargo fetch --target wasm32-wasip1 && cargo fetch --target "$host" || { echo "FAIL: cargo fetch" >&2; exit 1; }
echo "== CARGO_NET_OFFLINE=true sh build.sh"
kit_build env CARGO_NET_OFFLINE=true sh build.sh
cmp -s target/wasm32-wasip1/release/x-bot.wasm bot.wasm || kit_fail "build.sh did not copy the module"
# The build used the kit's versions (the referee's): every crate in the lock
# cargo kept is in the kit's lock at the same version (cargo drops the
# entries the workspace's other crates needed).
python3 - "$tmp/kit.lock" Cargo.lock <<'PY' || kit_fail "cargo changed a version of the kit's Cargo.lock"
import re, sys
def packages(path):
    text = open(path).read()
    return set(re.findall(r'name = "([^"]+)"\nversion = "([^"]+)"', text))
kit, used = packages(sys.argv[1]), packages(sys.argv[2])
changed = sorted(used - kit)
if changed:
    print("not the kit's versions:", changed)
    sys.exit(1)
print(f"Cargo.lock: the build used {len(used)} of the kit's {len(kit)} pinned packages, at their versions")
PY
arbiter check bot.wasm || kit_fail "arbiter check rejected the Rust template"

# The native build plays the same moves: its choices depend on the
# request alone.
if CARGO_NET_OFFLINE=true cargo build --release 2>"$tmp/native.txt"; then
  same_moves_natively target/release/x-bot
  same_moves_natively target/release/x-bot tictactoe house:tictactoe-perfect
else
  cat "$tmp/native.txt" >&2
  kit_fail "the native build failed"
fi

check_every_mode
play_every_game
kit_report "$toolchain"
