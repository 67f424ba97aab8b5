"""Fixtures of the real agents' tests: the pinned binaries, which tests/agents/setup.sh installs
into a cache outside the repository (skipped when already there)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

SETUP = Path(__file__).with_name("setup.sh")
BANNER = "#" * 86


@pytest.fixture(scope="session")
def agent_bins() -> dict[str, Path]:
    """The pinned `claude`, `codex` and `gemini` binaries. If they cannot be installed here,
    every test that needs them is skipped, loudly."""
    try:
        done = subprocess.run(
            ["bash", str(SETUP)], capture_output=True, text=True, timeout=900, check=False
        )
        failure = None if done.returncode == 0 else done.stderr.strip()[-600:]
    except (OSError, subprocess.TimeoutExpired) as exc:
        failure = str(exc)
    if failure is not None:
        message = (
            f"\n{BANNER}\n## SKIPPED: the real agents (Claude Code, Codex CLI, Gemini CLI) cannot "
            f"be installed here:\n## {failure}\n"
            f"## (tests/agents/setup.sh needs npm and the npm registry)\n{BANNER}"
        )
        sys.stderr.write(message + "\n")
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)
    cache = Path(done.stdout.strip().splitlines()[-1])
    bins = {
        "claude": cache / "claude-code-2.1.197" / "node_modules" / ".bin" / "claude",
        "codex": cache / "codex-0.169.0" / "node_modules" / ".bin" / "codex",
        "gemini": cache / "gemini-cli-0.61.0" / "node_modules" / ".bin" / "gemini",
    }
    for path in bins.values():
        assert os.access(path, os.X_OK), f"setup.sh said it installed {path}"
    return bins
