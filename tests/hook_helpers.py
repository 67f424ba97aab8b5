"""Helpers for the hook tests: a daemon for the hook client to reach (`memls serve --socket`)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
