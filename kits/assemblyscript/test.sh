#!/usr/bin/env bash
# CI test of the AssemblyScript kit: builds the template in a temporary
# folder with its one build command (which installs the pinned compiler from
# npm), checks it in every mode it claims, plays 2 matches per game against
# a house bot, and fails on any rejection or any fault of the kit's bot (see
# ../lib.sh). Run after setup.sh, from any folder:
#   ARBITER=/path/to/arbiter bash kits/assemblyscript/test.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../lib.sh"

kit_start assemblyscript
kit_build sh build.sh
asc_version=$(node_modules/.bin/asc --version | head -n 1)
shim_version=$(node -p "require('./node_modules/@assemblyscript/wasi-shim/package.json').version")
check_every_mode
play_every_game
kit_report "node $(node --version), npm $(npm --version), assemblyscript $asc_version, @assemblyscript/wasi-shim $shim_version"
