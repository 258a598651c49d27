#!/usr/bin/env bash
# Installs the Python kit's producer, componentize-py 0.25.1 (PyPI: it
# brings its own CPython 3.14 for WebAssembly), into a venv of the kit cache:
#   ${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}/python/venv
# which build.sh uses. Needs python3 with venv (installed with apt-get, as
# root, when `python3 -m venv` fails) and PyPI the first time; does nothing,
# quietly, when the pinned version is there. No root needed otherwise.
set -euo pipefail
COMPONENTIZE_PY_VERSION=0.25.1
cache=${ARBITER_KIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/arbiter/kits}
venv=$cache/python/venv

installed() {
  [ -x "$venv/bin/componentize-py" ] &&
    [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("componentize-py"))' 2>/dev/null)" = "$COMPONENTIZE_PY_VERSION" ]
}
if installed; then
  exit 0
fi

mkdir -p "$cache/python"
rm -rf "$venv"
if ! python3 -m venv "$venv" >/dev/null 2>&1; then
  rm -rf "$venv"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup.sh: python3 -m venv fails; install python3-venv (as root: apt-get install python3-venv) and run again" >&2
    exit 1
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --disable-pip-version-check -q "componentize-py==$COMPONENTIZE_PY_VERSION"
installed || { echo "setup.sh: componentize-py $COMPONENTIZE_PY_VERSION is not in $venv after pip install" >&2; exit 1; }
echo "python kit: componentize-py $COMPONENTIZE_PY_VERSION installed in $venv"
