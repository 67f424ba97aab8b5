#!/usr/bin/env bash
# OMEGA (PyPI omega-memory, pinned) in a venv of its own, built once and cached:
# $MEMLS_OMEGA_CACHE (default ~/.cache/memls-omega)/venv-<version>. OMEGA needs a Python whose
# sqlite3 can load extensions (sqlite-vec: without it OMEGA runs with no vector table and never
# supersedes); Debian's python3.11 can, so it is preferred. Prints the venv's python.
set -euo pipefail
VERSION=1.5.20
CACHE=${MEMLS_OMEGA_CACHE:-$HOME/.cache/memls-omega}
VENV=$CACHE/venv-$VERSION
if [ ! -x "$VENV/bin/python" ] || [ ! -f "$VENV/.installed" ]; then
  PY=""
  for candidate in ${MEMLS_OMEGA_PYTHON:-} /usr/bin/python3.11 python3.11 python3.12 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c \
      "import sqlite3; sqlite3.connect(':memory:').enable_load_extension(True)" 2>/dev/null; then
      PY=$candidate
      break
    fi
  done
  if [ -z "$PY" ]; then
    echo "no Python whose sqlite3 loads extensions (install python3.11)" >&2
    exit 1
  fi
  mkdir -p "$CACHE"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet "omega-memory==$VERSION" >&2
  touch "$VENV/.installed"
fi
echo "$VENV/bin/python"
