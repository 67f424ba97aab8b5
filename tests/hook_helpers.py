"""Helpers for the hook tests: the hook command as Claude Code runs it, the payloads it is fed
(tests/data/claude_code) and a daemon for it to reach (`memls serve --socket`)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import memls.hooks.client

DATA = Path(__file__).resolve().parent / "data" / "claude_code"
# as `memls hooks install` writes it: the interpreter without site, on the client's file
HOOK = [sys.executable, "-S", memls.hooks.client.__file__]


def payload(name: str, cwd: Path) -> str:
    event = json.loads((DATA / name).read_text())
    event["cwd"] = str(cwd)
    return json.dumps(event)


def hook(data_dir: Path, project: Path, stdin: str, *extra: str) -> subprocess.CompletedProcess:
    args = ["--project", str(project), "--data-dir", str(data_dir), *extra]
    return subprocess.run(HOOK + args, input=stdin, capture_output=True, text=True, timeout=60)


@contextmanager
def socket_daemon(data_dir: Path) -> Iterator[Path]:
    """The owner socket's daemon on `data_dir`, up once it says it serves; stopped with
    SIGTERM, which it must exit cleanly from."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "memls", "--data-dir", str(data_dir), "serve", "--socket"],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline()
    assert "serving" in line, line
    try:
        yield data_dir
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
