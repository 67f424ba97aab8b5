"""One owner per data directory, everyone else through its socket: real processes, no mocks."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import threading
from pathlib import Path

import pytest

from daemon_helpers import CLIENT, Procs, make_data, stop, texts, wait_for
from memls import protocol as p
from memls.cli import main
from memls.daemon import (
    LocalEngine,
    OwnerExited,
    RemoteEngine,
    open_engine,
    reconnect,
    socket_path,
)
from memls.engine import Engine
from memls.errors import InvalidInput, MemlsError, NotFound, Refused, StoreError


def test_remote_round_trip_errors_and_a_second_owner_attempt(tmp_path, procs, monkeypatch):
    data = make_data(tmp_path)
    owner, _ = procs.owner(data)
    sock = socket_path(data)
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600

    with open_engine(data, front="test", wait_seconds=5) as remote:
        assert isinstance(remote, RemoteEngine) and not isinstance(remote, Engine)
        assert remote.owner_pid == owner.pid
        stored = remote.store(
            p.StoreParams(text="We deploy with Kubernetes", project="web", type="decision")
        )
        assert isinstance(stored, p.StoreResult) and stored.created
        assert remote.store(
            p.StoreParams(text="we deploy with kubernetes", project="web")
        ).duplicate
        hits = remote.query(p.QueryParams(query="how do we deploy", project="web"))
        assert isinstance(hits, p.QueryResult) and [h.id for h in hits.results] == [stored.id]
        got = remote.get(p.GetParams(id=stored.id, project="web"))
        assert isinstance(got, p.Memory) and got.content == "We deploy with Kubernetes"
        fb = remote.feedback(p.FeedbackParams(id=stored.id, signal="helpful", project="web"))
        assert (fb.score, fb.trust) == (1, "candidate")

        # errors keep their class, message and field
        with pytest.raises(InvalidInput) as bad:
            remote.store(p.StoreParams(text="x", project="   "))
        assert bad.value.field == "project"
        with pytest.raises(NotFound) as missing:
            remote.get(p.GetParams(id=stored.id, project="api"))
        assert missing.value.field == "id" and "no memory" in missing.value.message
        gone = remote.forget(p.ForgetParams(id=stored.id, reason="user_deleted", project="web"))
        assert gone.id == stored.id
        with pytest.raises(Refused) as refused:
            remote.store(p.StoreParams(text="We deploy with Kubernetes", project="web"))
        assert refused.value.field == "text" and "user_deleted" in refused.value.message
        with pytest.raises(MemlsError) as unknown:
            remote._request("memory/nope", {})
        assert unknown.value.kind == "method_not_found"

        # a bad client does not take the server down
        raw = socket.socket(socket.AF_UNIX)
        raw.connect(str(sock))
        raw.sendall(b"{not json\n[1, 2]\n")
        lines = raw.makefile("rb")
        assert json.loads(lines.readline())["error"]["kind"] == "parse_error"
        assert json.loads(lines.readline())["error"]["kind"] == "invalid_request"
        raw.close()
        assert remote.stats(p.StatsParams(project="web")).forgotten == 1

        # a second owner attempt while one lives: a client, never a second local engine
        second = open_engine(data, front="lsp", serve=True, wait_seconds=5)
        try:
            assert isinstance(second, RemoteEngine) and not isinstance(second, Engine)
            assert second.owner_pid == owner.pid
        finally:
            second.close()

        # export / import through the socket
        remote.store(p.StoreParams(text="Tabs, not spaces", project="style"))
        exported = list(remote.export("style"))
        assert exported[0]["format"] == "memls-export"
        with pytest.raises(Refused) as clash:  # the same rows again: all or nothing
            remote.import_("style", [json.dumps(line) for line in exported])
        assert clash.value.field == "file"
        with pytest.raises(InvalidInput) as empty:
            remote.import_("style", [])
        assert empty.value.field == "file" and "empty" in empty.value.message

    # the CLI goes through the socket while a daemon owns the directory
    monkeypatch.setenv("MEMLS_DATA_DIR", str(data))
    assert main(["store", "-p", "cli", "Spaces in YAML", "--wait", "--json"]) == 0
    assert main(["list", "-p", "cli", "--json"]) == 0
    assert main(["get", "m_nope", "-p", "cli"]) == 1
    assert main(["export", "-p", "cli", "--out", str(tmp_path / "cli.jsonl")]) == 0
    assert "Spaces in YAML" in (tmp_path / "cli.jsonl").read_text()

    # closing the owner removes its socket
    assert stop(owner) == 0
    assert not sock.exists()
    assert "Traceback" not in procs.logs()


def test_two_clients_and_the_owner_store_concurrently_with_vectors(tmp_path, procs):
    data = make_data(tmp_path, vectors=True)
    n = int(os.environ.get("MEMLS_CONCURRENT_WRITES", 30))  # stores a writer; make soak: 300
    owner, ready = procs.owner(data, store=texts("owner", n))
    clients = []
    for who in ("one", "two"):
        out = tmp_path / f"{who}.json"
        proc = procs.spawn(
            CLIENT, str(data), str(out), json.dumps(texts(who, n)), name=f"client-{who}"
        )
        clients.append((proc, out))
    for proc, out in clients:  # both clients are connected before the start signal
        assert wait_for(Path(str(out) + ".connected"), proc=proc) == "connected"
    Procs.go(owner, *(proc for proc, _ in clients))
    for proc, _ in clients:
        assert proc.wait(timeout=600) == 0, procs.logs()
    owner_ids = wait_for(Path(str(ready) + ".done"), timeout=600, proc=owner).split("\n")
    acknowledged = set(owner_ids)
    for _, out in clients:
        acknowledged |= set(json.loads(out.read_text()))
    assert len(acknowledged) == 3 * n

    with open_engine(data, front="test") as remote:
        assert isinstance(remote, RemoteEngine) and remote.vectors_enabled
        listed = remote.list(p.ListParams(project="load", limit=1000)).memories
        assert {m.id for m in listed} == acknowledged
        assert remote.stats(p.StatsParams(project="load")).memories == 3 * n
        assert remote.flush(600)
        doctor = remote.doctor(p.DoctorParams(project="load"))
        assert doctor.ok, doctor.problems
        assert doctor.indexed == 3 * n and doctor.memories == 3 * n
        hit = remote.query(p.QueryParams(query="two records item 17", project="load", k=3))
        assert hit.results and not hit.degraded
    assert stop(owner) == 0
    logs = procs.logs()
    assert "database is locked" not in logs and "Traceback" not in logs, logs


def test_kill_9_the_owner_then_take_over_with_every_acknowledged_memory(tmp_path, procs):
    data = make_data(tmp_path)
    owner, _ = procs.owner(data)
    remote = open_engine(data, front="lsp", serve=True, wait_seconds=5)
    assert isinstance(remote, RemoteEngine)
    lost = threading.Event()
    remote.on_close.append(lambda exc: lost.set())
    acked: list[str] = []
    failure: list[BaseException] = []
    two_hundred = threading.Event()

    def writer() -> None:
        try:
            for text in texts("acked", 100_000):
                acked.append(remote.store(p.StoreParams(text=text, project="k")).id)
                if len(acked) == 200:
                    two_hundred.set()
        except StoreError as exc:
            failure.append(exc)
        finally:
            two_hundred.set()  # never leave the test waiting for a writer that stopped

    thread = threading.Thread(target=writer)
    thread.start()
    assert two_hundred.wait(300) and len(acked) >= 200, failure
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(timeout=30)
    thread.join(timeout=30)
    assert failure and isinstance(failure[0], StoreError)
    assert lost.wait(10)
    with pytest.raises(OwnerExited) as exited:
        remote.stats(p.StatsParams(project="k"))
    assert isinstance(exited.value, StoreError) and "exited" in exited.value.message
    assert socket_path(data).exists()  # the dead owner's socket is left behind

    # takeover: the kernel released the dead owner's flock; reconnect becomes the owner
    local = reconnect(remote)
    try:
        assert isinstance(local, LocalEngine) and isinstance(local, Engine)
        ids = {m.id for m in local.list(p.ListParams(project="k", limit=1000)).memories}
        assert set(acked) <= ids and len(acked) >= 200
        # serving again (it was opened with serve=True): a new client reaches the new owner
        sock = socket_path(data)
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        client = procs.spawn(
            "import sys; from memls.daemon import open_engine, RemoteEngine\n"
            "from memls import protocol as p\n"
            "e = open_engine(sys.argv[1], front='cli', wait_seconds=10)\n"
            "assert isinstance(e, RemoteEngine)\n"
            "print(e.owner_pid, e.stats(p.StatsParams(project='k')).memories)\n",
            str(data),
            name="after",
        )
        assert client.wait(timeout=60) == 0, procs.logs()
        pid, count = (tmp_path / "after.log").read_text().split()
        assert int(pid) == os.getpid() and int(count) == len(ids)
    finally:
        local.close()
    assert not socket_path(data).exists()


def test_a_short_lived_owner_without_a_socket_is_waited_for(tmp_path, procs):
    data = make_data(tmp_path)
    owner, _ = procs.owner(data, serve=False, hold=1.5)  # like a CLI command in progress
    assert not socket_path(data).exists()
    with pytest.raises(StoreError) as busy:
        open_engine(data, front="cli", wait_seconds=0.3)
    assert f"pid {owner.pid}" in busy.value.message and "does not serve" in busy.value.message
    engine = open_engine(data, front="cli", wait_seconds=60)  # waits for the owner to go
    try:
        assert isinstance(engine, LocalEngine)
        assert owner.wait(timeout=30) == 0
    finally:
        engine.close()


def test_a_long_data_directory_path_still_serves(tmp_path):
    # every wire method has its RemoteEngine twin, named like the owner's engine's
    for spec in p.METHODS.values():
        assert callable(getattr(RemoteEngine, spec.engine)) and hasattr(LocalEngine, spec.engine)
    data = make_data(tmp_path / ("x" * 120))
    assert len(str(socket_path(data))) > 108
    with open_engine(data, front="lsp", serve=True) as local:
        assert isinstance(local, LocalEngine) and local.server is not None
        with RemoteEngine.connect(data, front="cli") as remote:
            remote.store(p.StoreParams(text="long paths work", project="x"))
            assert remote.stats(p.StatsParams(project="x")).memories == 1
