# The two commands of the README: `make run` (the product) and `make test` (every test).
# Both create .venv and install what they need from nothing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint install clean

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

test: $(STAMP) lint
	@command -v nvim >/dev/null || (command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && (apt-get install -y -q neovim >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q neovim >/dev/null 2>&1))) || true
	$(PY) -m pytest -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info server/*.egg-info
