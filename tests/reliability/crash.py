"""The crash suite: SIGKILL whoever owns the store, again and again,
while CLI clients (processes on `open_engine`, as `memls` verbs are) and an LSP session
(`memls serve --stdio`, raw frames) store, supersede, give feedback and forget.

Every client writes each operation it got an answer for to its own JSON Lines log (a write(2)
per line: a SIGKILL does not lose it). Whoever holds the owner lock is killed, then started
again (the TCP daemon, a CLI client or the LSP session: any of them may have taken over).
At the end one fresh handle checks that every acknowledged operation is there:

- every acknowledged store is readable (or was forgotten/superseded by an acknowledged op);
- every acknowledged forget is gone and in the forgetting log;
- every acknowledged supersede left the old memory superseded by the new one;
- every memory's feedback signals are at least its acknowledged feedback;
- no text was stored twice; SQLite's integrity check says ok.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from reliability.wire import TOKEN, StdioServer

CLIENT = r"""
import json, os, random, sys, time
from memls import protocol as p
from memls.daemon.handle import open_engine, reconnect
from memls.daemon.client import OwnerExited
from memls.errors import MemlsError

data, project, stop, log_path, name = sys.argv[1:6]
rng = random.Random(os.getpid())
log = open(log_path, "a", buffering=1)
engine = open_engine(data, front="cli", serve=True, wait_seconds=120)
live, n = [], 0
while not os.path.exists(stop):
    n += 1
    roll = rng.random()
    try:
        if roll < 0.55 or len(live) < 3:
            text = f"{name} pid {os.getpid()} note {n}: keep the {rng.choice('abcdefgh')} logs"
            r = engine.store(p.StoreParams(text=text, project=project))
            live.append(r.id)
            log.write(json.dumps({"op": "store", "id": r.id, "text": text}) + "\n")
        elif roll < 0.75:
            mid = rng.choice(live)
            engine.feedback(p.FeedbackParams(id=mid, signal="helpful", project=project))
            log.write(json.dumps({"op": "feedback", "id": mid}) + "\n")
        elif roll < 0.88:
            old = live.pop(rng.randrange(len(live)))
            text = f"{name} pid {os.getpid()} replacement {n}: use the new pipeline"
            new = engine.store(p.StoreParams(text=text, project=project))
            log.write(json.dumps({"op": "store", "id": new.id, "text": text}) + "\n")
            engine.supersede(p.SupersedeParams(old=old, by=new.id, project=project))
            log.write(json.dumps({"op": "supersede", "old": old, "by": new.id}) + "\n")
            live.append(new.id)
        else:
            mid = live.pop(rng.randrange(len(live)))
            engine.forget(p.ForgetParams(id=mid, reason="user_deleted", project=project))
            log.write(json.dumps({"op": "forget", "id": mid}) + "\n")
    except OwnerExited:
        engine = reconnect(engine)   # the owner died: take over or join the next one
    except MemlsError as exc:
        if "owner" in str(exc).lower() or exc.kind == "store":
            time.sleep(0.05)
            engine = reconnect(engine)
        else:
            log.write(json.dumps({"op": "error", "error": str(exc)}) + "\n")
engine.close()
"""


def lock_holders(path: Path) -> set[int]:
    st = path.stat()
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        if fields[5].lower() == inode.lower():
            pids.add(int(fields[4]))
    return pids


class LspWriter:
    """A thread driving `memls serve --stdio` sessions; a killed session is replaced."""

    def __init__(self, data: Path, root: Path, log_path: Path) -> None:
        self.data, self.root, self.log_path = data, root, log_path
        self.stop = threading.Event()
        self.session: StdioServer | None = None
        self.sessions = 0
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start_session(self) -> None:
        self.session = StdioServer(self.data)
        self.sessions += 1
        reply = self.session.peer.initialize(self.root)
        assert "result" in reply, reply

    def run(self) -> None:
        rng = random.Random(7)
        live: list[str] = []
        n = 0
        with open(self.log_path, "a", buffering=1) as log:
            while not self.stop.is_set():
                try:
                    if self.session is None or not self.session.alive():
                        if self.session is not None:
                            self.session.close(timeout=5)
                        self.start_session()
                    peer = self.session.peer
                    n += 1
                    roll = rng.random()
                    if roll < 0.6 or len(live) < 3:
                        text = f"lsp session {self.sessions} note {n}: the {n % 7} rule holds"
                        r = peer.call("memory/store", {"text": text}, timeout=60)
                        if "result" in r:
                            live.append(r["result"]["id"])
                            log.write(
                                json.dumps({"op": "store", "id": r["result"]["id"], "text": text})
                                + "\n"
                            )
                    elif roll < 0.8:
                        mid = rng.choice(live)
                        r = peer.call("memory/feedback", {"id": mid, "signal": "helpful"})
                        if "result" in r:
                            log.write(json.dumps({"op": "feedback", "id": mid}) + "\n")
                    else:
                        mid = live.pop(rng.randrange(len(live)))
                        r = peer.call("memory/forget", {"id": mid, "reason": "user_deleted"})
                        if "result" in r:
                            log.write(json.dumps({"op": "forget", "id": mid}) + "\n")
                    if "error" in r and r["error"]["code"] == -32603:
                        self.errors.append(json.dumps(r))
                except (ConnectionError, TimeoutError, OSError, AssertionError):
                    time.sleep(0.05)  # the session was killed under us: start another


def run_crash_suite(tmp: Path, kills: int, clients: int = 2, seed: int = 11) -> dict:
    """Kill the owner `kills` times; returns the figures (and raises on any loss)."""
    from lsp_helpers import free_port, wait_for_port

    rng = random.Random(seed)
    data = tmp / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text("[index]\nvectors = false\n")
    root = tmp / "proj"
    root.mkdir()
    project = str(root.resolve())
    logs = tmp / "logs"
    logs.mkdir()
    stop = tmp / "stop"
    env = {**os.environ, "MEMLS_TOKEN": TOKEN}
    port = free_port()
    procs: dict[str, subprocess.Popen] = {}
    generation = {"n": 0}

    def start(name: str) -> None:
        generation["n"] += 1
        log = logs / f"{name}-{generation['n']}.jsonl"
        err = open(logs / f"{name}-{generation['n']}.stderr", "wb")
        if name == "daemon":
            cmd = [
                sys.executable,
                "-m",
                "memls",
                "--data-dir",
                str(data),
                "serve",
                "--tcp",
                f"127.0.0.1:{port}",
            ]
        else:
            cmd = [sys.executable, "-c", CLIENT, str(data), project, str(stop), str(log), name]
        procs[name] = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)

    start("daemon")
    assert wait_for_port(port), "the daemon did not start"
    for i in range(clients):
        start(f"cli{i}")
    lsp = LspWriter(data, root, logs / "lsp.jsonl")
    lsp.thread.start()
    started = time.monotonic()
    killed = []

    def acknowledged() -> int:
        return sum(path.read_bytes().count(b"\n") for path in logs.glob("*.jsonl"))

    try:
        for _ in range(kills):
            # kill when the clients have made progress since the last kill (they restart,
            # take over, reconnect), at a random moment within their writes
            floor = acknowledged() + rng.randint(8, 30)
            progress_deadline = time.monotonic() + 60
            while acknowledged() < floor and time.monotonic() < progress_deadline:
                time.sleep(0.02)
            deadline = time.monotonic() + 60
            holders: set[int] = set()
            while time.monotonic() < deadline:
                holders = (
                    lock_holders(data / "owner.lock") if (data / "owner.lock").exists() else set()
                )
                if holders:
                    break
                time.sleep(0.05)
            assert holders, "nobody owns the store"
            pid = holders.pop()
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            for name, proc in list(procs.items()):
                if proc.pid == pid:
                    proc.wait()
                    start(name)  # a new process in its place (a new log)
            # the LSP session, if it was the owner, is restarted by its own thread
    finally:
        stop.touch()
        lsp.stop.set()
        lsp.thread.join(timeout=120)
        if lsp.session is not None:
            lsp.session.close(timeout=30)
        for name, proc in procs.items():
            if name != "daemon":
                try:
                    proc.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        procs["daemon"].terminate()
        procs["daemon"].wait(timeout=60)
    seconds = time.monotonic() - started
    return verify(data, project, logs, kills=len(killed), seconds=seconds, lsp_errors=lsp.errors)


def verify(
    data: Path, project: str, logs: Path, *, kills: int, seconds: float, lsp_errors: list[str]
) -> dict:
    from memls import protocol as p
    from memls.engine import Engine
    from memls.errors import NotFound

    stores: dict[str, str] = {}
    forgets: set[str] = set()
    supersedes: list[tuple[str, str]] = []
    feedback: dict[str, int] = {}
    errors = []
    for path in sorted(logs.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if not line.endswith("}"):
                continue  # a line cut by the kill was never acknowledged to anyone
            entry = json.loads(line)
            if entry["op"] == "store":
                stores[entry["id"]] = entry["text"]
            elif entry["op"] == "forget":
                forgets.add(entry["id"])
            elif entry["op"] == "supersede":
                supersedes.append((entry["old"], entry["by"]))
            elif entry["op"] == "feedback":
                feedback[entry["id"]] = feedback.get(entry["id"], 0) + 1
            else:
                errors.append(entry)
    assert not errors, errors[:5]
    assert not lsp_errors, lsp_errors[:3]
    lost = []
    with Engine.open(data, front="verify", vectors=False) as engine:
        forgotten = {
            e.memory_id
            for e in engine.forgotten(p.ForgottenParams(project=project, limit=1000)).entries
        }
        for mid in stores:
            if mid in forgets:
                continue
            try:
                engine.get(p.GetParams(id=mid, project=project))
            except NotFound:
                if mid not in forgotten:  # forgotten by an op whose answer was lost: fine
                    lost.append(("store", mid))
        for mid in forgets:
            try:
                engine.get(p.GetParams(id=mid, project=project))
                lost.append(("forget", mid))
            except NotFound:
                pass
        for old, new in supersedes:
            if old in forgets:
                continue
            m = engine.get(p.GetParams(id=old, project=project))
            gone = new in forgets or new in forgotten  # forgetting it removed the edge
            if m.status != "superseded" or (not gone and new not in m.superseded_by):
                lost.append(("supersede", old))
    import sqlite3

    db = sqlite3.connect(f"file:{data / 'memls.sqlite3'}?mode=ro", uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        signals = dict(db.execute("SELECT memory_id, COUNT(*) FROM feedback GROUP BY memory_id"))
        duplicated = sum(
            n - 1
            for (n,) in db.execute(
                "SELECT COUNT(*) FROM memories WHERE project = ? GROUP BY content", (project,)
            )
        )
        total = db.execute(
            "SELECT COUNT(*) FROM memories WHERE project = ?", (project,)
        ).fetchone()[0]
    finally:
        db.close()
    for mid, n in feedback.items():
        if mid not in forgets and mid not in forgotten and signals.get(mid, 0) < n:
            lost.append(("feedback", mid))
    figures = {
        "kills": kills,
        "seconds": round(seconds, 1),
        "acknowledged_stores": len(stores),
        "acknowledged_forgets": len(forgets),
        "acknowledged_supersedes": len(supersedes),
        "acknowledged_feedback": sum(feedback.values()),
        "lost": len(lost),
        "duplicated": duplicated,
        "memories": total,
    }
    assert not lost, (lost[:10], figures)
    assert duplicated == 0, figures
    return figures


MIXED = r"""
import json, os, random, sys, time, traceback
from memls import protocol as p
from memls.daemon.handle import open_engine

data, project, n, out, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
rng = random.Random(os.getpid())
engine = open_engine(data, front="cli", serve=True, wait_seconds=60)  # the first serves
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
mine, errors, ops = [], [], {}
started = time.monotonic()
for i in range(n):
    roll = rng.random()
    op = ("store" if roll < 0.35 or len(mine) < 3 else "query" if roll < 0.55 else
          "get" if roll < 0.65 else "list" if roll < 0.72 else "feedback" if roll < 0.82 else
          "stats" if roll < 0.87 else "supersede" if roll < 0.94 else "forget")
    ops[op] = ops.get(op, 0) + 1
    try:
        if op == "store":
            mine.append(engine.store(p.StoreParams(
                text=f"client {os.getpid()} op {i}: the {rng.choice('abcdef')} job runs hourly",
                project=project)).id)
        elif op == "query":
            engine.query(p.QueryParams(query="job runs hourly", project=project, k=5))
        elif op == "get":
            engine.get(p.GetParams(id=rng.choice(mine), project=project))
        elif op == "list":
            engine.list(p.ListParams(project=project, limit=50))
        elif op == "feedback":
            engine.feedback(p.FeedbackParams(id=rng.choice(mine), signal="helpful",
                                             project=project))
        elif op == "stats":
            engine.stats(p.StatsParams(project=project))
        elif op == "supersede":
            old = mine.pop(rng.randrange(len(mine)))
            new = engine.store(p.StoreParams(text=f"client {os.getpid()} op {i}: replaced",
                                             project=project)).id
            engine.supersede(p.SupersedeParams(old=old, by=new, project=project))
            mine.append(new)
        else:
            engine.forget(p.ForgetParams(id=mine.pop(rng.randrange(len(mine))),
                                         reason="user_deleted", project=project))
    except Exception:
        errors.append(traceback.format_exc())
report = {"ops": ops, "errors": errors, "seconds": time.monotonic() - started,
          "handle": type(engine).__name__}
with open(out + ".tmp", "w") as f:
    json.dump(report, f)
os.replace(out + ".tmp", out)
while not os.path.exists(go + ".done"):  # the owner stays until every client is done
    time.sleep(0.01)
engine.close()
"""


def run_concurrent_clients(tmp: Path, clients: int, ops: int) -> dict:
    """`clients` processes × `ops` mixed operations at once on one store (the first to come
    owns it and serves the others); returns the figures."""
    data = tmp / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text("[index]\nvectors = false\n")
    go = tmp / "go"
    procs = []
    for i in range(clients):
        out = tmp / f"client{i}.json"
        proc = subprocess.Popen(
            [sys.executable, "-c", MIXED, str(data), "proj", str(ops), str(out), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        procs.append((proc, out))
    started = time.monotonic()
    go.touch()
    reports = []
    deadline = time.monotonic() + 1800
    while not all(out.exists() for _, out in procs) and time.monotonic() < deadline:
        assert all(proc.poll() is None for proc, _ in procs), "a client died"
        time.sleep(0.05)
    seconds = time.monotonic() - started
    (tmp / "go.done").touch()
    for proc, out in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()[-3000:]
        proc.stdout.close()
        proc.stderr.close()
        reports.append(json.loads(out.read_text()))
    errors = [e for r in reports for e in r["errors"]]
    return {
        "clients": clients,
        "ops_each": ops,
        "errors": len(errors),
        "first_errors": errors[:3],
        "seconds": round(seconds, 1),
        "handles": sorted(r["handle"] for r in reports),
    }
