"""An engine handle opened with a deadline: nothing it does waits past it (real processes,
a real socket, the real store)."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memls import __version__
from memls import protocol as p
from memls.daemon import OwnerSilent, RemoteEngine, open_engine, socket_path
from memls.errors import StoreError

HOLD = (
    "import sys, pathlib; from memls.ownership import OwnerLock; "
    "lock = OwnerLock(pathlib.Path(sys.argv[1])); lock.acquire(); "
    "print('held', flush=True); sys.stdin.read()"
)


def lexical(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text("[index]\nvectors = false\n")
    return data


def outbox_rows(data: Path) -> int:
    db = sqlite3.connect(f"file:{data / 'memls.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0]
    finally:
        db.close()


class HelloOnly:
    """A socket at the owner's address that shakes hands and then answers nothing."""

    def __init__(self, data: Path) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(socket_path(data)))
        self.listener.listen(4)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn, conn.makefile("rb") as lines:
            for line in lines:
                message = json.loads(line)
                if message["method"] == "$/hello":
                    hello = {"pid": 1, "version": __version__, "front": "silent"}
                    reply = {"id": message["id"], "result": hello}
                    conn.sendall(json.dumps(reply).encode() + b"\n")

    def close(self) -> None:
        self.listener.close()


def test_a_call_the_owner_does_not_answer_ends_at_the_deadline(tmp_path):
    data = lexical(tmp_path)
    silent = HelloOnly(data)
    try:
        engine = RemoteEngine.connect(data, front="cli", timeout=30)
        engine.deadline = time.monotonic() + 0.5
        started = time.monotonic()
        with pytest.raises(OwnerSilent) as silence:
            engine.store(p.StoreParams(text="a note", project="p"))
        waited = time.monotonic() - started
        engine.close()
    finally:
        silent.close()
    assert 0.4 <= waited < 2.0, waited
    assert "did not answer memory/store" in silence.value.message
    assert "outcome is unknown" in silence.value.message


def test_reaching_a_store_held_by_a_process_that_does_not_serve_ends_at_the_deadline(tmp_path):
    data = lexical(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(data)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(StoreError) as refused:
            open_engine(data, front="cli", deadline=started + 1.0)
        waited = time.monotonic() - started
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    assert 0.9 <= waited < 2.0, waited
    assert f"(pid {holder.pid})" in refused.value.message


def test_a_store_owned_for_one_call_leaves_what_it_cannot_index_in_time(tmp_path):
    """Past its deadline the call's owner begins no indexing: the write waits in the outbox
    for the next owner; with time to spare it indexes before it closes."""
    data = lexical(tmp_path)
    with open_engine(data, front="cli", deadline=time.monotonic() + 0.5) as engine:
        engine.store(p.StoreParams(text="the cache is flushed hourly", project="p"))
    assert outbox_rows(data) == 1
    with open_engine(data, front="cli", deadline=time.monotonic() + 300) as engine:
        engine.store(p.StoreParams(text="the queue is drained nightly", project="p"))
    assert outbox_rows(data) == 0
