#!/usr/bin/env bash
# claude-mem (npm claude-mem, pinned) and the Bun runtime its database module runs on (npm bun,
# pinned: claude-mem's SessionStore opens its SQLite store with bun:sqlite), cached under the
# repository: $MEMLS_IMPORT_TOOLS (default .cache/import-tools, ignored)/claude-mem-<version>.
# claude-mem's package is unpacked as published (`npm pack`): its database module needs none of
# its dependencies, which serve its worker's HTTP server. Prints two lines on success, the bun
# binary and claude-mem's package folder; exits 3 when they cannot be installed here (the tests
# then skip, loudly).
set -euo pipefail
VERSION=13.25.3
BUN_VERSION=1.4.4
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${MEMLS_IMPORT_TOOLS:-$ROOT/.cache/import-tools}
DIR=$CACHE/claude-mem-$VERSION
log() { echo "claude-mem setup: $*" >&2; }
command -v npm >/dev/null || { log "no npm on PATH"; exit 3; }
mkdir -p "$CACHE"
if command -v flock >/dev/null; then exec 9>"$CACHE/.claude-mem.lock"; flock 9; fi
BUN=$DIR/bun/node_modules/.bin/bun
STORE=$DIR/package/plugin/sqlite/SessionStore.js
if [ -f "$DIR/.complete" ] && [ -f "$STORE" ] && "$BUN" --version >/dev/null 2>&1; then
  printf '%s\n%s\n' "$BUN" "$DIR/package"
  exit 0
fi
log "npm pack claude-mem@$VERSION, npm install bun@$BUN_VERSION"
rm -rf "$DIR"
mkdir -p "$DIR/bun"
(cd "$DIR" && npm pack --silent "claude-mem@$VERSION" >/dev/null && tar xzf "claude-mem-$VERSION.tgz" \
  && rm "claude-mem-$VERSION.tgz") || { log "cannot fetch claude-mem@$VERSION"; exit 3; }
(cd "$DIR/bun" && npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
  "bun@$BUN_VERSION" >&2) || { log "cannot install bun@$BUN_VERSION"; exit 3; }
"$BUN" --version >/dev/null 2>&1 || { log "bun@$BUN_VERSION installed but does not run"; exit 3; }
[ -f "$STORE" ] || { log "claude-mem@$VERSION has no plugin/sqlite/SessionStore.js"; exit 3; }
touch "$DIR/.complete"
printf '%s\n%s\n' "$BUN" "$DIR/package"
