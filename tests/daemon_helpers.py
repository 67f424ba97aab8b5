"""Child processes for the daemon tests: an owner of a data directory and clients of its
socket, as real `python -c` processes (no mocks), and what the tests need around them."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

YARN = "We use yarn for package management"
PNPM = "We switched from yarn to pnpm for package management"

OWNER = r"""
import os, random, signal, sys, time
from memls import protocol as p
from memls.daemon import open_engine

data, ready, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
engine = open_engine(data, front="owner", serve=sys.argv[4] == "serve", wait_seconds=60)
try:
    with open(ready + ".tmp", "w") as f:
        f.write(f"{type(engine).__name__} {os.getpid()}")
    os.replace(ready + ".tmp", ready)
    if count:
        sys.stdin.readline()  # the start signal
        ids = [engine.store(p.StoreParams(text=text, project="load")).id
               for text in __import__("json").loads(sys.argv[5])]
        with open(ready + ".done", "w") as f:
            f.write("\n".join(ids))
    hold = float(sys.argv[6]) if len(sys.argv) > 6 else 3600
    time.sleep(hold)
finally:
    engine.close()
"""

CLIENT = r"""
import json, os, sys, time
from memls import protocol as p
from memls.daemon import RemoteEngine, open_engine

data, out, texts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
engine = open_engine(data, front="client", wait_seconds=60)
assert isinstance(engine, RemoteEngine), type(engine)
with open(out + ".tmp", "w") as f:
    f.write("connected")
os.replace(out + ".tmp", out + ".connected")
sys.stdin.readline()  # the start signal
ids = [engine.store(p.StoreParams(text=t, project="load")).id for t in texts]
engine.close()
with open(out, "w") as f:
    json.dump(ids, f)
"""

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def texts(who: str, n: int) -> list[str]:
    """n distinct sentences (distinct canonical hashes, little lexical overlap)."""
    out = []
    for i in range(n):
        a, b, c = WORDS[i % 26], WORDS[(i // 26) % 26], WORDS[(i * 7 + 3) % 26]
        out.append(f"{who} records item {i}: {a} {b} {c} service uses port {1000 + i}")
    return out


def make_data(tmp_path: Path, *, vectors: bool = False) -> Path:
    data = tmp_path / "d"
    data.mkdir(mode=0o700, parents=True)
    if not vectors:
        (data / "config.toml").write_text("[index]\nvectors = false\n")
    return data


def wait_for(path: Path, timeout: float = 120.0, proc: subprocess.Popen | None = None) -> str:
    """The text of `path` once a child process has written it (atomically, by rename).

    A bounded wait on the real condition rather than an event: the child is another process
    that tells us nothing else; fails at once if it exits first, and after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process exited with {proc.returncode} before {path.name}")
        assert time.monotonic() < deadline, f"timed out waiting for {path}"
        time.sleep(0.02)
    return path.read_text()


class Procs:
    """Child processes of one test, killed at teardown if still alive."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.started: list[tuple[subprocess.Popen, Path]] = []

    def spawn(self, script: str, *args: str, name: str) -> subprocess.Popen:
        log = self.tmp_path / f"{name}.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c", script, *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.PIPE,
                cwd=self.tmp_path,
            )
        self.started.append((proc, log))
        return proc

    def owner(
        self,
        data: Path,
        *,
        serve: bool = True,
        store: list[str] | None = None,
        hold: float | None = None,
        name: str = "owner",
    ) -> tuple[subprocess.Popen, Path]:
        ready = self.tmp_path / f"{name}.ready"
        args = [
            str(data),
            str(ready),
            str(len(store or [])),
            "serve" if serve else "local",
            json.dumps(store or []),
        ]
        if hold is not None:
            args.append(str(hold))
        proc = self.spawn(OWNER, *args, name=name)
        assert wait_for(ready, proc=proc).startswith("LocalEngine")
        return proc, ready

    @staticmethod
    def go(*started: subprocess.Popen) -> None:
        """The start signal: one line on each process's stdin."""
        for proc in started:
            proc.stdin.write(b"go\n")
            proc.stdin.flush()

    def logs(self) -> str:
        return "\n".join(log.read_text(errors="replace") for _, log in self.started if log.exists())

    def close(self) -> None:
        for proc, _ in self.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
            proc.stdin.close()


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=60)


class Heard:
    """Notifications as a client's listener receives them (on its reader thread), with a
    condition to wait on: a test waits for the one it expects, never sleeps between looks."""

    def __init__(self) -> None:
        self.payloads: list[Any] = []
        self._arrived = threading.Condition()

    def __call__(self, method: str, payload: Any) -> None:
        with self._arrived:
            self.payloads.append(payload)
            self._arrived.notify_all()

    def wait(self, check, timeout: float = 30.0) -> bool:
        """True once `check(payloads)` holds (False after `timeout` seconds without)."""
        with self._arrived:
            return self._arrived.wait_for(lambda: check(self.payloads), timeout)


def stop_daemon(data_dir, timeout: float = 60.0) -> int | None:
    """Stop the owner of `data_dir` that a session started (the daemon `memls mcp` or a hook
    starts, which outlives them; its pid is in the lock file): SIGTERM, then wait for its exit
    on a pidfd, not a poll. Returns the pid stopped, or None."""
    import os
    import select

    from memls.ownership import OwnerLock

    data_dir = Path(data_dir)
    pid = OwnerLock(data_dir).holder() if data_dir.exists() else None
    if pid is None or pid == os.getpid():
        return None
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return None
    try:
        os.kill(pid, signal.SIGTERM)
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"the daemon {pid} did not exit {timeout} s after SIGTERM")
    except ProcessLookupError:
        return None
    finally:
        os.close(fd)
    return pid
