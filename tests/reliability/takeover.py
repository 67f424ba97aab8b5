"""`memls store` on the command line while owners are SIGKILLed and started around it.

One data directory with vectors on (the real models: an owner killed mid-indexing leaves an
outbox behind, which whoever takes the store next inherits). Around a loop of `memls store`
commands, run one after the other and each timed from outside:

- an editor-like writer (a process on `open_engine(serve=True)`, as `memls serve --stdio` is)
  stores as fast as the owner answers, so the outbox always holds a backlog; killed, it is
  started again at once and takes over or joins the next owner;
- `memls serve --socket` (the daemon the agents' hooks start), started again after each kill
  after a random 0-1.5 s, so that the next owner is sometimes the daemon, sometimes the
  writer, sometimes a `memls store` that found nobody serving and took the store itself;
- every 0.5-2.5 s the process holding the owner lock is SIGKILLed, whichever it is.

Every command must end within its bound (`memls.cli.common.CALL_SECONDS`): stored (exit 0,
the id on stdout), or one `memls: error:` line (exit 1), or killed by the suite as the owner.
Afterwards every store acknowledged to a command or to the writer is there with its text,
and no text is stored twice.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from reliability.crash import lock_holders

WRITER = r"""
import json, os, sys, time
from memls import protocol as p
from memls.daemon.handle import open_engine, reconnect
from memls.errors import MemlsError

data, project, stop = sys.argv[1:4]
log = sys.stdout  # one line a store acknowledged: the suite reads them as they come
engine = open_engine(data, front="editor", serve=True, wait_seconds=120)
n = 0
while not os.path.exists(stop):
    n += 1
    text = f"editor pid {os.getpid()} note {n}: the {n % 9} queue drains at night"
    try:
        r = engine.store(p.StoreParams(text=text, project=project))
    except MemlsError:
        engine = reconnect(engine)  # the owner died: take over or join the next one
        continue
    log.write(json.dumps({"id": r.id, "text": text}) + "\n")
    log.flush()
    time.sleep(0.05)  # 20 stores a second: more than the owner indexes, a backlog grows
engine.close(flush_timeout=0)
"""

STORED = re.compile(r"^(?:stored (m_[0-9a-f]+) in|duplicate: (m_[0-9a-f]+) already)")


class Owners:
    """The writer and the daemon: started, killed when they own the store, started again."""

    def __init__(self, data: Path, project: str, logs: Path, stop: Path, rng: random.Random):
        self.data, self.project, self.logs, self.stop, self.rng = data, project, logs, stop, rng
        self.writer: subprocess.Popen | None = None
        self.daemons: list[subprocess.Popen] = []
        self.started = 0
        self.killed: dict[str, int] = {"writer": 0, "daemon": 0, "command": 0}
        self.timers: list[threading.Timer] = []
        self.closing = threading.Lock()  # a daemon started late by a timer, or closed: not both
        self.closed = False
        self.acknowledged: list[dict] = []  # the writer's stores, as it reports them
        self.progress = threading.Condition()
        self.readers: list[threading.Thread] = []

    def _popen(self, name: str, command: list[str], **kw) -> subprocess.Popen:
        self.started += 1
        err = open(self.logs / f"{name}-{self.started}.stderr", "wb")
        kw.setdefault("stdout", subprocess.DEVNULL)
        try:
            return subprocess.Popen(command, stderr=err, **kw)
        finally:
            err.close()

    def start_writer(self) -> None:
        command = [sys.executable, "-c", WRITER, str(self.data), self.project, str(self.stop)]
        self.writer = self._popen("writer", command, stdout=subprocess.PIPE)
        reader = threading.Thread(target=self._read, args=(self.writer,), daemon=True)
        self.readers.append(reader)
        reader.start()

    def _read(self, writer: subprocess.Popen) -> None:
        assert writer.stdout is not None
        for line in writer.stdout:
            if line.endswith(b"}\n"):  # a line cut by the kill was never acknowledged
                with self.progress:
                    self.acknowledged.append(json.loads(line))
                    self.progress.notify_all()
        writer.stdout.close()

    def wait_for_writes(self, count: int, timeout: float = 120.0) -> None:
        """Until the writer has acknowledged `count` more stores (it writes on whichever
        owner there is: progress since the last kill)."""
        with self.progress:
            goal = len(self.acknowledged) + count
            assert self.progress.wait_for(lambda: len(self.acknowledged) >= goal, timeout), (
                "the writer made no progress"
            )

    def start_daemon(self, ready: bool = False) -> None:
        """`memls serve --socket`, unless one runs already; `ready`: return once it serves
        (it says so on a pipe)."""
        command = [sys.executable, "-m", "memls", "--data-dir", str(self.data), "serve"]
        with self.closing:
            if self.closed or any(d.poll() is None for d in self.daemons):
                return
            read_end, write_end = os.pipe()
            try:
                daemon = self._popen(
                    "daemon",
                    [*command, "--socket", "--ready-fd", str(write_end)],
                    pass_fds=(write_end,),
                )
            finally:
                os.close(write_end)
            self.daemons.append(daemon)
        with os.fdopen(read_end, "rb") as said:
            if ready:
                assert said.readline() == b"ready\n", "the daemon did not start"

    def start_daemon_later(self) -> None:
        timer = threading.Timer(self.rng.uniform(0.0, 1.5), self.start_daemon)
        self.timers.append(timer)
        timer.start()

    def kill_owner(self) -> bool:
        """SIGKILL whoever holds the owner lock now; False when nobody does."""
        holders = lock_holders(self.data / "owner.lock")
        if not holders:
            return False
        pid = holders.pop()
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return False
        if self.writer is not None and self.writer.pid == pid:
            self.killed["writer"] += 1
            self.writer.wait()
            self.start_writer()
        elif any(d.pid == pid for d in self.daemons):
            self.killed["daemon"] += 1
        else:
            self.killed["command"] += 1
        self.start_daemon_later()
        return True

    def close(self) -> None:
        self.stop.touch()
        with self.closing:
            self.closed = True
        for timer in self.timers:
            timer.cancel()
        if self.writer is not None:
            try:
                self.writer.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.writer.kill()
                self.writer.wait()
        for reader in self.readers:
            reader.join(timeout=30)
        for daemon in self.daemons:
            if daemon.poll() is None:
                daemon.terminate()
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:  # it did not stop on SIGTERM: say so, then kill
                daemon.kill()
                daemon.wait()
                raise AssertionError(f"the daemon (pid {daemon.pid}) ignored SIGTERM") from None


class Commands:
    """`memls store` one after the other in a thread, each timed from outside."""

    def __init__(self, data: Path, project: str) -> None:
        self.data, self.project = data, project
        self.calls: list[dict] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        n = 0
        while not self.done.is_set():
            n += 1
            text = f"command {n}: the release train leaves at {n % 24} o'clock"
            command = [sys.executable, "-m", "memls", "--data-dir", str(self.data), "store"]
            started = time.monotonic()
            proc = subprocess.run(
                [*command, text, "--project", self.project],
                capture_output=True,
                text=True,
                timeout=300,  # far past any bound: a hang shows as a long call, not a stuck test
            )
            self.calls.append(
                {
                    "text": text,
                    "seconds": time.monotonic() - started,
                    "rc": proc.returncode,
                    "out": proc.stdout,
                    "err": proc.stderr,
                }
            )


def outbox_rows(data: Path) -> int:
    import sqlite3

    db = sqlite3.connect(f"file:{data / 'memls.sqlite3'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0]
    finally:
        db.close()


def killed_with_backlog(data: Path, project: str, stores: int) -> int:
    """`memls serve --socket` takes `stores` memories through its socket (acknowledged,
    faster than it indexes them) and is SIGKILLed: returns how many rows it left in the
    outbox for whoever owns the store next."""
    from memls import protocol as p
    from memls.daemon import open_engine

    logs = data.parent / "logs"
    logs.mkdir(exist_ok=True)
    owners = Owners(data, project, logs, data.parent / "stop", random.Random(0))
    owners.start_daemon(ready=True)
    daemon = owners.daemons[0]
    with open_engine(data, front="seed", wait_seconds=30) as engine:
        for n in range(stores):
            text = f"service {n} listens on port {8000 + n} and owns the table t{n}"
            engine.store(p.StoreParams(text=text, project=project))
    daemon.kill()
    daemon.wait()
    return outbox_rows(data)


def run_takeover(tmp: Path, kills: int, seed: int = 5) -> dict:
    """Kill the owner `kills` times while `memls store` commands run; returns the figures
    (every command's time and outcome in `calls`) after checking the store."""
    rng = random.Random(seed)
    data = tmp / "data"
    data.mkdir(mode=0o700)
    root = tmp / "proj"
    root.mkdir()
    project = str(root.resolve())
    logs = tmp / "logs"
    logs.mkdir()
    owners = Owners(data, project, logs, tmp / "stop", rng)
    commands = Commands(data, project)
    owners.start_daemon(ready=True)
    owners.start_writer()
    commands.thread.start()
    started = time.monotonic()
    done = tries = 0
    try:
        while done < kills and tries < 4 * kills:
            owners.wait_for_writes(rng.randint(5, 40))
            time.sleep(rng.uniform(0.0, 1.5))  # a moment of the command's call, chosen
            tries += 1
            done += owners.kill_owner()
    finally:
        commands.done.set()
        commands.thread.join(timeout=600)
        owners.close()
    seconds = time.monotonic() - started
    return verify(data, project, logs, commands.calls, owners, kills=done, seconds=seconds)


def verify(
    data: Path, project: str, logs: Path, calls: list[dict], owners: Owners, **figures
) -> dict:
    from memls import protocol as p
    from memls.engine import Engine
    from memls.errors import NotFound

    acknowledged: dict[str, str] = {}
    outcomes = {"stored": 0, "failed": 0, "killed_owning": 0}
    for call in calls:
        match = STORED.match(call["out"].strip())
        if call["rc"] == 0 and match:
            acknowledged[match[1] or match[2]] = call["text"]
            outcomes["stored"] += 1
        elif call["rc"] == -signal.SIGKILL:
            outcomes["killed_owning"] += 1  # it owned the store: killed as the owner
        else:
            outcomes["failed"] += 1
    for entry in owners.acknowledged:
        acknowledged[entry["id"]] = entry["text"]
    lost = []
    with Engine.open(data, front="verify", vectors=False) as engine:
        for memory_id, text in acknowledged.items():
            try:
                memory = engine.get(p.GetParams(id=memory_id, project=project))
            except NotFound:
                lost.append(memory_id)
                continue
            if memory.content != text:
                lost.append(memory_id)
    import sqlite3

    db = sqlite3.connect(f"file:{data / 'memls.sqlite3'}?mode=ro", uri=True)
    try:
        duplicated = sum(
            n - 1
            for (n,) in db.execute(
                "SELECT COUNT(*) FROM memories WHERE project = ? GROUP BY content", (project,)
            )
        )
    finally:
        db.close()
    left = outbox_rows(data)
    times = sorted(c["seconds"] for c in calls)
    return {
        **figures,
        "killed": dict(owners.killed),
        "commands": len(calls),
        **outcomes,
        "writer_stores": len(owners.acknowledged),
        "lost": len(lost),
        "duplicated": duplicated,
        "outbox_left": left,
        "p50": round(statistics.median(times), 2) if times else None,
        "p90": round(times[int(0.9 * (len(times) - 1))], 2) if times else None,
        "max": round(times[-1], 2) if times else None,
        "calls": calls,
    }


def quantiles(times: list[float]) -> str:
    times = sorted(times)
    if not times:
        return "-"
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    return (
        f"p50 {statistics.median(times):.2f} s, p90 {times[round(0.9 * (len(times) - 1))]:.2f} "
        f"s, p99 {p99:.2f} s, max {times[-1]:.2f} s (n={len(times)})"
    )


def starts(tmp: Path, count: int) -> dict[str, list[float]]:
    """`count` times: a fresh `memls serve --socket` from its start until it serves, a
    `memls store` through it, then, the daemon SIGKILLed, a `memls store` that finds nobody
    serving and takes the store itself."""
    data = tmp / "data"
    data.mkdir(mode=0o700)
    owners = Owners(data, "p", tmp, tmp / "stop", random.Random(0))
    out: dict[str, list[float]] = {"owner": [], "through": [], "owning": []}
    store = [sys.executable, "-m", "memls", "--data-dir", str(data), "store"]
    for n in range(count):
        started = time.monotonic()
        owners.start_daemon(ready=True)
        out["owner"].append(time.monotonic() - started)
        for key in ("through", "owning"):
            started = time.monotonic()
            proc = subprocess.run([*store, f"fact {n} {key}", "-p", "p"], capture_output=True)
            out[key].append(time.monotonic() - started)
            assert proc.returncode == 0, proc.stderr
            if key == "through":
                daemon = owners.daemons[-1]
                daemon.kill()
                daemon.wait()
    owners.close()
    return out


def main() -> None:
    import argparse
    import shlex
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--backlog", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    print("$ PYTHONPATH=tests .venv/bin/python -m reliability.takeover " + shlex.join(sys.argv[1:]))
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at the start")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "starts").mkdir()
        times = starts(base / "starts", args.starts)
        print(f"fresh owner, start to serving:             {quantiles(times['owner'])}")
        print(f"memls store through that owner:            {quantiles(times['through'])}")
        print(f"memls store, owner SIGKILLed, none serves: {quantiles(times['owning'])}")
        (base / "backlog" / "data").mkdir(parents=True, mode=0o700)
        data = base / "backlog" / "data"
        left = killed_with_backlog(data, "p", args.backlog)
        started = time.monotonic()
        store = [sys.executable, "-m", "memls", "--data-dir", str(data), "store"]
        proc = subprocess.run([*store, "one more fact", "-p", "p"], capture_output=True)
        took = time.monotonic() - started
        print(
            f"owner SIGKILLed with {left} rows in the outbox, then memls store: {took:.2f} s, "
            f"exit {proc.returncode}, {outbox_rows(data)} rows left for the next owner"
        )
        (base / "kills").mkdir()
        figures = run_takeover(base / "kills", args.kills, seed=args.seed)
    calls = figures.pop("calls")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{args.kills} SIGKILLs of the owner: {figures}")
    print(f"memls store meanwhile: {quantiles([c['seconds'] for c in calls])}")
    each = [f"{c['seconds']:.2f}" + ("" if c["rc"] == 0 else f" (exit {c['rc']})") for c in calls]
    print("each: " + ", ".join(each))
    for call in calls:
        if call["rc"] not in (0, -signal.SIGKILL):
            print(f"  exit {call['rc']} after {call['seconds']:.2f} s: {call['err'].strip()}")


if __name__ == "__main__":
    main()
