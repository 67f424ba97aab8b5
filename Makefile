# The two commands of the README: `make run` (the product) and `make test` (every test).
# Both create .venv and install what they need from nothing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: run test soak lint install clean extension e2e screenshot agents import-tools omega

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# The daemon on the default store (your data directory): LSP on loopback TCP with a token,
# and the owner socket that the CLI and other editor windows go through.
PORT ?= 7457
run: $(STAMP)
	$(VENV)/bin/memls serve --tcp 127.0.0.1:$(PORT)

# The house's checks: layers (import-linter), lint and format (ruff), types (mypy).
lint: $(STAMP)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check server tests benchmarks
	$(VENV)/bin/ruff format --check server tests benchmarks
	$(VENV)/bin/mypy

# Debian's tools the tests run, as command:package: headless Neovim (tests/e2e) and strace, which
# records every connection memls makes (tests/privacy); installed when missing, as root.
TEST_TOOLS := nvim:neovim strace:strace
test: $(STAMP) lint import-tools
	@for tool in $(TEST_TOOLS); do command -v $${tool%%:*} >/dev/null || (command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && (apt-get install -y -q $${tool#*:} >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $${tool#*:} >/dev/null 2>&1))) || true; done
	@status=0; $(PY) -m pytest -q $(PYTEST_ARGS) || status=1; \
	  [ -n "$(SKIP_EXTENSION)" ] || bash extension/scripts/test.sh || status=1; exit $$status

# The other memory tools whose stores `memls import` reads (tests/imports), pinned and built once
# into .cache/import-tools (ignored): basic-memory from PyPI in a venv of its own (it needs
# Python 3.12+), claude-mem from npm with the Bun runtime its database module runs on. A tool
# that cannot be installed here is reported and its tests skip, loudly.
IMPORT_TOOLS := tests/imports/setup_basic_memory.sh tests/imports/setup_claude_mem.sh
import-tools:
	@for setup in $(IMPORT_TOOLS); do bash $$setup >/dev/null || echo "import-tools: $$setup could not install its tool here"; done

# The real agents' tests alone (tests/agents: Claude Code, the Codex CLI and the Gemini CLI
# headless, their models scripted on loopback; `make test` runs them too). tests/agents/setup.sh
# installs the pinned binaries from npm into ~/.cache/memls-agents once ($$MEMLS_AGENTS_CACHE
# for another).
agents: $(STAMP)
	$(PY) -m pytest -q -n 0 tests/agents

# OMEGA (PyPI omega-memory, pinned) in a venv of its own, the store tests/imports import from
# (`make test` builds it there when missing): once, in ~/.cache/memls-omega
# ($$MEMLS_OMEGA_CACHE for another), from a Python whose sqlite3 loads extensions (python3.11).
omega:
	bash tests/imports/setup_omega.sh

# The VS Code extension: extension/memls-<version>.vsix (npm ci: the lockfile's exact versions).
extension:
	cd extension && npm ci --no-audit --no-fund --loglevel=error && npm run -s package

# The extension's end-to-end test alone, in a real VS Code (code-server + headless Chromium).
# Its screenshot goes to extension/.test-results/; `make screenshot` replaces the README's copy
# (docs/images/vscode-extension.png) with a new one.
e2e: $(STAMP)
	cd extension && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && bash e2e/run.sh

screenshot:
	MEMLS_E2E_SCREENSHOT=docs $(MAKE) e2e

# The long reliability run (docs/reliability.md): 10,000 fuzzed frames on each of five
# transports (LSP stdio, TCP before and after the token, owner socket, MCP stdio), 60 SIGKILLs
# of the owner, 3 clients x 1,000 operations, 3 writers x 300 memories on one store (two
# editors and the CLI; an owner and two socket clients). Output: benchmarks/results/soak.txt.
SOAK_ENV := MEMLS_FUZZ_EXAMPLES=10000 MEMLS_CRASH_KILLS=60 MEMLS_TAKEOVER_KILLS=20 MEMLS_CONCURRENT_OPS=1000 MEMLS_CONCURRENT_WRITES=300
SOAK_TESTS := tests/reliability tests/e2e/test_concurrent_owners.py \
	tests/daemon/test_owner.py::test_two_clients_and_the_owner_store_concurrently_with_vectors
soak: SHELL := /bin/bash
soak: $(STAMP)
	@mkdir -p benchmarks/results
	@echo '$$ $(SOAK_ENV) $(PY) -m pytest -q -s -n 0 $(SOAK_TESTS)' > benchmarks/results/soak.txt
	set -o pipefail; $(SOAK_ENV) $(PY) -m pytest -q -s -n 0 $(SOAK_TESTS) 2>&1 | tee -a benchmarks/results/soak.txt

clean:
	rm -rf $(VENV) build *.egg-info server/*.egg-info extension/node_modules extension/dist extension/*.vsix \
	  .cache/import-tools
