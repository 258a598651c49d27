#!/usr/bin/env bash
# Installs the Zig toolchain of the Zig kit: Zig 0.17.1 from the `ziglang`
# package on PyPI, in a virtualenv at /opt/arbiter-kits/zig-venv (override
# the parent with ARBITER_KITS_DIR), with a `zig` command in the venv's bin/
# linked as /usr/local/bin/zig (unless another zig is there), so `zig` works
# on PATH. For a fresh Debian 12 machine run as root; does nothing when that
# Zig is already there.
set -euo pipefail

ZIG_VERSION=0.17.1
VENV=${ARBITER_KITS_DIR:-/opt/arbiter-kits}/zig-venv
LINK=/usr/local/bin/zig

installed() {
    [ -x "$VENV/bin/python3" ] && [ "$("$VENV/bin/python3" -m ziglang version 2>/dev/null)" = "$ZIG_VERSION" ]
}

# The `zig` command: the venv's Zig, and a link to it on PATH.
put_on_path() {
    printf '#!/bin/sh\nexec "%s" -m ziglang "$@"\n' "$VENV/bin/python3" > "$VENV/bin/zig"
    chmod 755 "$VENV/bin/zig"
    if [ ! -e "$LINK" ] || [ "$(readlink "$LINK" 2>/dev/null)" = "$VENV/bin/zig" ]; then
        mkdir -p "$(dirname "$LINK")"
        ln -sf "$VENV/bin/zig" "$LINK"
    else
        echo "setup.sh: $LINK exists and is not this kit's; use $VENV/bin/zig" >&2
    fi
}

if installed; then
    put_on_path
    echo "zig $ZIG_VERSION already installed ($VENV/bin/zig, on PATH as $(command -v zig || echo "$VENV/bin/zig"))"
    exit 0
fi

# Debian's python3 needs python3-venv for `python3 -m venv` (with pip).
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip ca-certificates
fi

mkdir -p "$(dirname "$VENV")"
if [ ! -x "$VENV/bin/python3" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python3" -m pip install --disable-pip-version-check --no-input --quiet "ziglang==$ZIG_VERSION"

if ! installed; then
    echo "setup.sh: ziglang==$ZIG_VERSION installed but '$VENV/bin/python3 -m ziglang version' does not say $ZIG_VERSION" >&2
    exit 1
fi
put_on_path
echo "installed zig $ZIG_VERSION ($VENV/bin/zig, on PATH as $(command -v zig || echo "$VENV/bin/zig"))"
