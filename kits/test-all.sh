#!/usr/bin/env bash
# Builds every bot kit's template from source and plays it, as CI does:
# for each kits/LANG with a test.sh, installs its toolchain (setup.sh, which
# does nothing when it is there) and runs its test (build, `arbiter check`
# in every mode it claims, 2 matches per game against a house bot, no fault
# allowed). ARBITER names the binary (default target/debug/arbiter).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ARBITER=${ARBITER:-$(cd "$here/.." && pwd)/target/debug/arbiter}
for kit in "$here"/*/; do
  name=$(basename "$kit")
  # Kits have a README; src/ is the crate that embeds them.
  [ -f "$kit/README.md" ] || continue
  [ -f "$kit/test.sh" ] || { echo "== kit $name: no test.sh (see its README)"; continue; }
  echo "== kit $name: setup"
  bash "$kit/setup.sh"
  echo "== kit $name: test"
  bash "$kit/test.sh"
done
echo "every kit builds, checks and plays"
