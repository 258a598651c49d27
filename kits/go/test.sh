#!/usr/bin/env bash
# CI test of the Go kit: builds the template in a temp folder, checks it in
# every mode it claims, plays 2 matches per game against a house bot, and
# fails on any rejection or any fault of the kit's bot (see ../lib.sh). A Go
# module is 3.5 MB: compiling it cold takes about 5-8 s of the check's 20 s
# of CPU time (CPU time, so a busy machine does not change the verdict).
#   ARBITER=path/to/arbiter bash kits/go/test.sh   (default: target/debug/arbiter)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"
command -v go >/dev/null 2>&1 || { echo "FAIL: go not found; run kits/go/setup.sh" >&2; exit 1; }

kit_start go
# A private build cache, so the build time is that of a first build.
export GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath"
kit_build sh build.sh
check_every_mode
play_every_game
kit_report "$(go version)"
