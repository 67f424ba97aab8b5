"""Headless Neovim as a real memls client (Debian's neovim, 0.7.2 or later).

Neovim starts the daemon itself (`vim.lsp.start_client`), opens AGENTS.md, sends custom requests
with `client.request_sync`, waits for the contradiction's diagnostics (`vim.diagnostic.get`) and
writes what it saw as JSON (nvim_client.lua) for the assertions here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CLIENT = Path(__file__).with_name("nvim_client.lua")
YARN = "We use yarn for package management"
PNPM = "We switched from yarn to pnpm for package management"
BASE = f"""# Agent notes

## Conventions
- {YARN}
- The API listens on port 8080

## Update 2024-05-01
"""
# a note's own units are compared across the change it records (the Update section)
YARN_LINE, PNPM_LINE = 3, 7  # 0-based, as LSP and vim.diagnostic count them
WARN = 2  # vim.diagnostic.severity.WARN (LSP DiagnosticSeverity.Warning)
STORED = "Releases are cut from the main branch every Friday"


def run_nvim(tmp_path: Path, note: str, *, append: str = "", diag_timeout_ms: int = 60_000):
    """Run the Lua client against a workspace whose AGENTS.md holds `note`; its JSON report."""
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.skip("nvim is not installed (`make test` installs Debian's neovim via apt-get)")
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(note)
    out = tmp_path / "nvim-report.json"
    home = tmp_path / "home"  # Neovim's own state, cache and lsp.log stay in the test's dir
    env = {
        **os.environ,
        "MEMLS_E2E_PYTHON": sys.executable,
        "MEMLS_E2E_DATA": str(tmp_path / "data"),
        "MEMLS_E2E_ROOT": str(root.resolve()),
        "MEMLS_E2E_OUT": str(out),
        "MEMLS_E2E_TIMEOUT_MS": "60000",
        "MEMLS_E2E_DIAG_TIMEOUT_MS": str(diag_timeout_ms),
        "MEMLS_E2E_APPEND": append,
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }
    try:
        proc = subprocess.run(
            [nvim, "--headless", "--clean", "-c", f"luafile {CLIENT}"],
            env=env,
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=85,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"nvim did not finish within 85 s; stderr: {exc.stderr!r}")
    assert out.exists(), f"nvim wrote no report (rc {proc.returncode}): {proc.stderr[-2000:]}"
    report = json.loads(out.read_text())
    assert report["ok"], f"the Lua client failed: {report.get('error')} (steps {report['steps']})"
    report["project"] = str(root.resolve())
    return report


def check_query(report):
    """The memory stored through Neovim comes back from its query, in the folder's project."""
    project = report["project"]
    stored = report["store"]
    assert stored["created"] and stored["project"] == project
    query = report["query"]
    assert query["project"] == project
    hits = {hit["id"]: hit for hit in query["results"]}
    assert stored["id"] in hits, query
    assert hits[stored["id"]]["content"] == STORED
    assert hits[stored["id"]]["project"] == project


def check_contradiction(report, pnpm_line=PNPM_LINE):
    """Warning diagnostics from memls on both contradicting lines, each quoting the other."""
    mine = [d for d in report["diagnostics"] if d["source"] == "memls"]
    assert report["buffer_lines"][YARN_LINE] == f"- {YARN}"
    assert report["buffer_lines"][pnpm_line] == f"- {PNPM}"
    assert sorted({d["lnum"] for d in mine}) == [YARN_LINE, pnpm_line], report["diagnostics"]
    assert all(d["severity"] == WARN for d in mine), mine
    on_yarn = [d for d in mine if d["lnum"] == YARN_LINE]
    on_pnpm = [d for d in mine if d["lnum"] == pnpm_line]
    assert any(PNPM in d["message"] for d in on_yarn), on_yarn
    assert any(YARN in d["message"] for d in on_pnpm), on_pnpm
    return on_yarn, on_pnpm


def test_neovim_edit_into_contradiction(tmp_path):
    """AGENTS.md on disk says yarn; the pnpm line is typed into the buffer (didChange)."""
    report = run_nvim(tmp_path, BASE, append=f"- {PNPM}")
    check_query(report)
    assert "edited" in report["steps"]
    check_contradiction(report)
    # the daemon shut down cleanly when Neovim stopped the client
    assert report["exit"] and report["exit"]["code"] == 0, report["exit"]


def test_neovim_note_already_contradicting_on_disk(tmp_path):
    """AGENTS.md holds both contradicting items before Neovim opens it."""
    report = run_nvim(tmp_path, BASE + f"- {PNPM}\n", diag_timeout_ms=20_000)
    check_query(report)
    check_contradiction(report)


# an instruction file records no change of its own: any two of its lines are compared
PLAIN = f"""# Agent notes

## Conventions
- {YARN}
- The API listens on port 8080
"""


def test_neovim_instruction_file_contradicting_itself(tmp_path):
    """AGENTS.md without an Update section: the pnpm line typed below the yarn line is flagged
    on both lines, each message naming the other by its words, its path and line, and the
    kind of contradiction."""
    report = run_nvim(tmp_path, PLAIN, append=f"- {PNPM}")
    on_yarn, on_pnpm = check_contradiction(report, pnpm_line=5)
    assert any(
        d["message"].startswith(f"A later switch: contradicts “{YARN}” (AGENTS.md:4)")
        for d in on_pnpm
    ), on_pnpm
    assert any(
        d["message"].startswith(f"A later switch: contradicted by “{PNPM}” (AGENTS.md:6)")
        for d in on_yarn
    ), on_yarn
