#!/usr/bin/env bash
# Installs the C toolchain for Arbiter bots on Debian 12 (bookworm), as root.
# Idempotent: does nothing when the packages are already installed.
#   clang 14 + wasm-ld (lld 14) + wasi-libc + the wasm32 compiler-rt builtins.
# Tested with the versions below; they are not pinned for apt, since a
# Debian point release replaces them on the mirror (test.sh prints what ran).
set -euo pipefail

PKGS=(
  "clang-14=1:14.0.6-12"
  "lld-14=1:14.0.6-12"
  "libclang-rt-14-dev-wasm32=1:14.0.6-12"
  "wasi-libc=0.0~git20220510.9886d3d-2"
  # unversioned names: /usr/bin/clang, /usr/bin/wasm-ld
  "clang=1:14.0-55.7~deb12u1"
  "lld=1:14.0-55.7~deb12u1"
  "libclang-rt-dev-wasm32=1:14.0-55.7~deb12u1"
)

missing=()
for p in "${PKGS[@]}"; do
  name=${p%%=*}
  have=$(dpkg-query -W -f='${db:Status-Abbrev}' "$name" 2>/dev/null || true)
  if [ "$have" != "ii " ]; then
    missing+=("$name")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "kits/c/setup.sh: toolchain already installed ($(clang --version | head -n1))"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "kits/c/setup.sh: need root to install: ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "kits/c/setup.sh: installed $(clang --version | head -n1)"
