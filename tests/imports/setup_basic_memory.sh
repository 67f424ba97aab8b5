#!/usr/bin/env bash
# basic-memory (PyPI basic-memory, pinned) in a venv of its own, built once and cached under the
# repository: $MEMLS_IMPORT_TOOLS (default .cache/import-tools, ignored)/basic-memory-<version>.
# basic-memory needs Python 3.12 or newer: the first of $MEMLS_PYTHON312, python3.13, python3.12
# on PATH and pyenv's 3.12+ builds. Prints the venv's `basic-memory` on success; exits 3 when it
# cannot be installed here (the tests then skip, loudly).
set -euo pipefail
VERSION=0.24.1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${MEMLS_IMPORT_TOOLS:-$ROOT/.cache/import-tools}
DIR=$CACHE/basic-memory-$VERSION
log() { echo "basic-memory setup: $*" >&2; }
mkdir -p "$CACHE"
# one installer at a time (the test run's workers may start it together)
if command -v flock >/dev/null; then exec 9>"$CACHE/.basic-memory.lock"; flock 9; fi
if [ -f "$DIR/.complete" ] && "$DIR/venv/bin/basic-memory" --version >/dev/null 2>&1; then
  echo "$DIR/venv/bin/basic-memory"
  exit 0
fi
PY=""
for candidate in ${MEMLS_PYTHON312:-} python3.13 python3.12 "$HOME"/.pyenv/versions/3.1[2-9]*/bin/python3; do
  [ -n "$candidate" ] || continue
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c \
    "import sys, venv; sys.exit(sys.version_info < (3, 12))" 2>/dev/null; then
    PY=$candidate
    break
  fi
done
[ -n "$PY" ] || { log "no Python 3.12 or newer here (basic-memory needs one)"; exit 3; }
log "pip install basic-memory==$VERSION with $("$PY" --version)"
rm -rf "$DIR"
mkdir -p "$DIR"
"$PY" -m venv "$DIR/venv" >&2 || { log "cannot make a venv with $PY"; exit 3; }
"$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "basic-memory==$VERSION" >&2 || { log "cannot install basic-memory==$VERSION"; exit 3; }
"$DIR/venv/bin/basic-memory" --version >/dev/null 2>&1 \
  || { log "basic-memory==$VERSION installed but does not run"; exit 3; }
touch "$DIR/.complete"
echo "$DIR/venv/bin/basic-memory"
