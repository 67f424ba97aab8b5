"""What the real agents' tests share: the README's quickstart project, an agent's environment
(a throwaway HOME, memls from this checkout's .venv on PATH, a fresh data directory), running a
headless session, and stopping the daemon that a session leaves running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from daemon_helpers import stop_daemon  # noqa: F401 - the tests take it from here
from suite_processes import RUN_MARK

# The README's quickstart notes, word for word.
AGENTS_LINE = "Deploys go through Jenkins."
CLAUDE_LINE = "We switched from Jenkins to GitHub Actions for deploys."


def venv_bin() -> Path:
    """This checkout's .venv/bin (the interpreter running the tests): where `memls` is."""
    folder = Path(sys.executable).parent
    assert (folder / "memls").exists(), f"no memls in {folder} (make install)"
    return folder


def quickstart(folder: Path) -> Path:
    """The README's quickstart project: `~/demo` with its AGENTS.md and CLAUDE.md."""
    folder.mkdir(parents=True)
    (folder / "AGENTS.md").write_text(f"- {AGENTS_LINE}\n")
    (folder / "CLAUDE.md").write_text(f"- {CLAUDE_LINE}\n")
    return folder.resolve()


def agent_env(home: Path, data_dir: Path | None, **extra: str) -> dict[str, str]:
    """An agent's environment from nothing: none of this process's variables (no coding
    client's, no model's), memls first on PATH, `data_dir` as MEMLS_DATA_DIR (None: memls's
    default under the throwaway HOME), the model cache and the mark of the test run."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": f"{venv_bin()}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
        **extra,
    }
    if data_dir is not None:
        env["MEMLS_DATA_DIR"] = str(data_dir)
    if "MEMLS_MODEL_CACHE" in os.environ:  # tests/conftest.py: graphs optimised once a run
        env["MEMLS_MODEL_CACHE"] = os.environ["MEMLS_MODEL_CACHE"]
    if RUN_MARK in os.environ:  # what the end check knows the suite's processes by
        env[RUN_MARK] = os.environ[RUN_MARK]
    return env


def default_data_dir(home: Path) -> Path:
    """memls's data directory for a user whose HOME is `home` and who set nothing else."""
    return home / ".local" / "share" / "memls"


def run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 120.0):
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
