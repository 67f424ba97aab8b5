#!/usr/bin/env bash
# Installs the real coding agents the tests in this folder drive, pinned, into a cache OUTSIDE
# the repository, each skipped when it is already there:
#   npm: @anthropic-ai/claude-code (its native binary, node_modules/.bin/claude)
#        @openai/codex             (node_modules/.bin/codex and its platform binary)
#        @google/gemini-cli        (node_modules/.bin/gemini, a Node bundle)
# Needs only Node 20 + npm and the npm registry. Prints the cache directory on success; exits 3
# when something cannot be installed here (the tests then skip, loudly).
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.197
CODEX_VERSION=0.169.0
GEMINI_CLI_VERSION=0.61.0
CACHE="${MEMLS_AGENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memls-agents}"
log() { echo "agents setup: $*" >&2; }
command -v npm >/dev/null || { log "no npm on PATH"; exit 3; }
mkdir -p "$CACHE"
# one installer at a time (the test run's workers may start it together)
if command -v flock >/dev/null; then exec 9>"$CACHE/.lock"; flock 9; fi

# runs DIR BIN: `BIN --version` works, run with a HOME of its own (gemini writes ~/.gemini even
# for that) and, for gemini, in one process (it starts itself again for more heap otherwise)
runs() {
  mkdir -p "$1/home"
  HOME="$1/home" GEMINI_CLI_NO_RELAUNCH=true "$1/node_modules/.bin/$2" --version >/dev/null 2>&1
}

# install NAME VERSION BIN: npm install into CACHE/NAME-VERSION, complete once BIN runs
install() {
  local dir="$CACHE/$1-$2" spec="$3@$2" bin="$4"
  if [ -f "$dir/.complete" ] && runs "$dir" "$bin"; then
    return 0
  fi
  log "npm install $spec"
  rm -rf "$dir"; mkdir -p "$dir"
  (cd "$dir" && npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$spec" >&2) \
    || { log "cannot install $spec"; return 3; }
  runs "$dir" "$bin" \
    || { log "$spec installed but $bin --version fails"; return 3; }
  touch "$dir/.complete"
}

install claude-code "$CLAUDE_CODE_VERSION" @anthropic-ai/claude-code claude || exit 3
install codex "$CODEX_VERSION" @openai/codex codex || exit 3
install gemini-cli "$GEMINI_CLI_VERSION" @google/gemini-cli gemini || exit 3
echo "$CACHE"
