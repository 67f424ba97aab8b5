"""The socket daemon stops on SIGTERM whichever of its threads the kernel hands it to."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from pathlib import Path

SYS_TGKILL = 234  # x86-64


def tgkill(pid: int, tid: int, sig: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(SYS_TGKILL, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), f"tgkill {pid} {tid}")


def test_sigterm_to_a_worker_thread_stops_the_daemon(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memls", "--data-dir", str(tmp_path / "data"), "serve", "--socket"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert "serving" in line, line
        workers = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid]
        assert workers, "the daemon runs threads besides its main one"
        tgkill(proc.pid, max(workers), signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
