#!/usr/bin/env bash
# `make run` until the daemon lands: a short tour of the engine through the CLI, on the
# embedded default store in your data directory (project "memls-demo").
set -euo pipefail
memls=${1:-memls}
p=memls-demo
echo "# data directory: ${MEMLS_DATA_DIR:-(your data directory)}; project: $p"
set -x
"$memls" --version
"$memls" store --project $p --type decision "We use pnpm for package management"
"$memls" store --project $p --type convention "Tests live in tests/ and run with make test"
"$memls" query --project $p "which package manager do we use"
"$memls" stats --project $p
