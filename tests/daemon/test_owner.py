"""One owner per data directory, everyone else through its socket: real processes, no mocks."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memls import protocol as p
from memls.cli import main
from memls.daemon import (
    LocalEngine, OwnerExited, RemoteEngine, open_engine, reconnect, socket_path,
)
from memls.engine import Engine
from memls.errors import InvalidInput, MemlsError, NotFound, Refused, StoreError

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
        while not os.path.exists(ready + ".go"):
            time.sleep(0.01)
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

data, go, out, texts = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
engine = open_engine(data, front="client", wait_seconds=60)
assert isinstance(engine, RemoteEngine), type(engine)
while not os.path.exists(go):
    time.sleep(0.01)
ids = [engine.store(p.StoreParams(text=t, project="load")).id for t in texts]
engine.close()
with open(out, "w") as f:
    json.dump(ids, f)
"""

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


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
            proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=out,
                                    stderr=subprocess.STDOUT, cwd=self.tmp_path)
        self.started.append((proc, log))
        return proc

    def owner(self, data: Path, *, serve: bool = True, store: list[str] | None = None,
              hold: float | None = None, name: str = "owner") -> tuple[subprocess.Popen, Path]:
        ready = self.tmp_path / f"{name}.ready"
        args = [str(data), str(ready), str(len(store or [])), "serve" if serve else "local",
                json.dumps(store or [])]
        if hold is not None:
            args.append(str(hold))
        proc = self.spawn(OWNER, *args, name=name)
        assert wait_for(ready, proc=proc).startswith("LocalEngine")
        return proc, ready

    def logs(self) -> str:
        return "\n".join(log.read_text(errors="replace") for _, log in self.started
                         if log.exists())

    def close(self) -> None:
        for proc, _ in self.started:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)


@pytest.fixture
def procs(tmp_path):
    group = Procs(tmp_path)
    yield group
    group.close()


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    return proc.wait(timeout=60)


# ---------------------------------------------------------------- tests


def test_remote_round_trip_errors_and_a_second_owner_attempt(tmp_path, procs, monkeypatch):
    data = make_data(tmp_path)
    owner, _ = procs.owner(data)
    sock = socket_path(data)
    assert stat.S_ISSOCK(sock.stat().st_mode) and stat.S_IMODE(sock.stat().st_mode) == 0o600

    with open_engine(data, front="test", wait_seconds=5) as remote:
        assert isinstance(remote, RemoteEngine) and not isinstance(remote, Engine)
        assert remote.owner_pid == owner.pid
        stored = remote.store(p.StoreParams(text="We deploy with Kubernetes", project="web",
                                            type="decision"))
        assert isinstance(stored, p.StoreResult) and stored.created
        assert remote.store(p.StoreParams(text="we deploy with kubernetes",
                                          project="web")).duplicate
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


def test_subscribed_client_receives_conflict_notifications(tmp_path, procs):
    data = make_data(tmp_path)
    procs.owner(data)
    got: list[tuple[str, object]] = []
    arrived = threading.Event()

    def listener(method, payload):
        got.append((method, payload))
        if method == "memory/conflicts":
            arrived.set()

    with open_engine(data, front="lsp") as remote, open_engine(data, front="cli") as quiet:
        remote.listeners.append(listener)  # subscribes the connection
        old = quiet.store(p.StoreParams(text=YARN, project="alpha"))
        remote.store(p.StoreParams(text="The API listens on port 8080", project="alpha"))
        new = quiet.store(p.StoreParams(text=PNPM, project="alpha"))
        assert remote.flush()
        assert arrived.wait(30), "no memory/conflicts notification"
        [note] = [payload for method, payload in got if method == "memory/conflicts"]
        assert isinstance(note, p.ConflictsNotification)
        # every notification is decoded into its protocol Struct
        assert all(isinstance(payload, p.NOTIFICATIONS[method]) for method, payload in got)
        assert note.project == "alpha" and note.id == new.id
        assert [(c.newer.id, c.older.id) for c in note.conflicts] == [(new.id, old.id)]
        assert not quiet._subscribed  # nobody listens there: no subscription
        listed = remote.conflicts(p.ConflictsParams(project="alpha")).conflicts
        assert [(c.newer.id, c.older.id) for c in listed] == [(new.id, old.id)]


def test_a_scoped_subscription_receives_only_its_projects(tmp_path, procs):
    data = make_data(tmp_path)
    procs.owner(data)
    scoped: list[object] = []
    everything: list[object] = []
    with open_engine(data, front="lsp") as window, open_engine(data, front="agent") as agent, \
            open_engine(data, front="cli") as writer:
        window.subscribed_projects = frozenset({" alpha"})  # keys are normalised by the owner
        window.listeners.append(lambda method, payload: scoped.append(payload))
        agent.listeners.append(lambda method, payload: everything.append(payload))
        with pytest.raises(InvalidInput) as caught:  # a bad scope is refused, changes nothing
            window._request("$/subscribe", {"projects": "alpha"})
        assert caught.value.field == "projects"
        a = writer.store(p.StoreParams(text="Alpha deploys on Tuesdays", project="alpha"))
        b = writer.store(p.StoreParams(text="Beta deploys on Fridays", project="beta"))
        assert writer.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and {n.project for n in everything} != {"alpha", "beta"}:
            time.sleep(0.05)
        assert {n.project for n in everything} == {"alpha", "beta"}
        assert scoped and {n.project for n in scoped} == {"alpha"}  # beta's never sent here
        assert a.id in {i for n in scoped for i in n.ids} and b.id not in str(scoped)
        window.subscribe(["alpha", "beta"])  # widening replaces the scope
        writer.store(p.StoreParams(text="Beta also deploys on Mondays", project="beta"))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "beta" not in {n.project for n in scoped}:
            time.sleep(0.05)
        assert "beta" in {n.project for n in scoped}


def test_two_clients_and_the_owner_store_concurrently_with_vectors(tmp_path, procs):
    data = make_data(tmp_path, vectors=True)
    n = 300
    owner, ready = procs.owner(data, store=texts("owner", n))
    clients = []
    for who in ("one", "two"):
        out = tmp_path / f"{who}.json"
        proc = procs.spawn(CLIENT, str(data), str(ready) + ".go", str(out),
                           json.dumps(texts(who, n)), name=f"client-{who}")
        clients.append((proc, out))
    time.sleep(1.0)  # let both clients connect before the start signal
    Path(str(ready) + ".go").write_text("go")
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

    def writer() -> None:
        try:
            for text in texts("acked", 100_000):
                acked.append(remote.store(p.StoreParams(text=text, project="k")).id)
        except StoreError as exc:
            failure.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    while len(acked) < 200:
        time.sleep(0.01)
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
            str(data), name="after")
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
    started = time.monotonic()
    engine = open_engine(data, front="cli", wait_seconds=30)
    try:
        assert isinstance(engine, LocalEngine) and time.monotonic() - started < 20
        assert owner.wait(timeout=30) == 0
    finally:
        engine.close()


def test_a_long_data_directory_path_still_serves(tmp_path):
    # every wire method has its RemoteEngine twin, named like the engine's
    for spec in p.METHODS.values():
        assert callable(getattr(RemoteEngine, spec.engine)) and hasattr(Engine, spec.engine)
    data = make_data(tmp_path / ("x" * 120))
    assert len(str(socket_path(data))) > 108
    with open_engine(data, front="lsp", serve=True) as local:
        assert isinstance(local, LocalEngine) and local.server is not None
        with RemoteEngine.connect(data, front="cli") as remote:
            remote.store(p.StoreParams(text="long paths work", project="x"))
            assert remote.stats(p.StatsParams(project="x")).memories == 1
            assert remote.owner_pid == os.getpid()
    assert not socket_path(data).exists()
