"""Two editor sessions and the CLI write to one data directory at the same time, for real.

Two `python -m memls serve --stdio` processes (driven by pytest-lsp clients with VS Code's and
Neovim's capabilities), started at the same moment, share one data dir and one workspace folder;
one wins the store and serves <data dir>/memls.sock, the other joins it through that socket.
Meanwhile a third process does what the CLI does: `memls.daemon.handle.open_engine(data_dir,
front="cli")` and MEMLS_CONCURRENT_WRITES stores in a loop (four threads on one handle), as each
session does, and a few real `memls store ... --json` invocations run one after another beside
it (a real CLI start-up costs ~0.5 s, so hundreds of them would take minutes). `make test` writes
60 a writer, `make soak` 300.

Afterwards: every acknowledged id is listed and counted, doctor says SQLite and Chroma agree once
the index has caught up, a few of the memories are found by a query, no process logged "database
is locked" or a Chroma error or a traceback, and exactly one process owns the store.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities

from lsp_helpers import CHANGED, CONFLICTS, plain
from memls.daemon import RemoteEngine

PER_WRITER = int(os.environ.get("MEMLS_CONCURRENT_WRITES", 30))  # each of the 3 writers
REAL_CLI = 6  # real `memls store` processes, in addition to the CLI loop's PER_WRITER
IN_FLIGHT = 8  # memory/store requests each LSP client keeps in flight
NOTES = ["The API listens on port 8080", "Tests run with pytest", "Deploys go out on Tuesdays"]
AGENTS = "# Agent notes\n\n## Conventions\n" + "".join(f"- {n}\n" for n in NOTES)

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()
THINGS = (
    "cache ledger router parser scheduler mailer exporter gateway planner indexer tracker renderer"
).split()


def texts(who: str, n: int) -> list[str]:
    """n distinct memories for one writer (distinct canonical hashes, varied vocabulary)."""
    out = []
    for i in range(n):
        a, b, c = WORDS[i % 26], WORDS[(i // 26) % 26], WORDS[(i * 7 + 3) % 26]
        thing = THINGS[(i * 5) % len(THINGS)]
        out.append(f"{who} note {i}: the {thing} of {a} {b} keeps {c} records for {who} {i}")
    return out


CLI_LOOP = r"""
import json, os, sys, time, traceback
from concurrent.futures import ThreadPoolExecutor
from memls import protocol as p
from memls.daemon.handle import open_engine

data, project, out = sys.argv[1:4]
texts = json.loads(sys.argv[4])
engine = open_engine(data, front="cli")
report = {"handle": type(engine).__name__, "owner_pid": getattr(engine, "owner_pid", None),
          "pid": os.getpid(), "ids": [], "errors": []}
print("ready", flush=True)
sys.stdin.readline()  # the start signal: everyone writes at once

def one(text):
    try:
        return engine.store(p.StoreParams(text=text, project=project)).id
    except Exception:
        report["errors"].append(traceback.format_exc())
        return None

started = time.monotonic()
with ThreadPoolExecutor(4) as pool:
    report["ids"] = list(pool.map(one, texts))
report["seconds"] = time.monotonic() - started
engine.close()
with open(out, "w") as f:
    json.dump(report, f)
"""

BAD = [
    re.compile(p, re.I)
    for p in (
        r"database is locked",
        r"traceback \(most recent call last\)",
        r"chroma\w*.*(error|exception|fail)",
        r"(error|exception|fail).*chroma",
    )
]


async def call(client, method, **params):
    return plain(await client.protocol.send_request_async(method, params))


async def start_session(editor: str, root: Path, env: dict, stderr: Path):
    """A real `memls serve --stdio` whose stderr goes to a file, initialized like `editor`."""
    command = [sys.executable, "-m", "memls", "serve", "--stdio"]
    shell = ["/bin/sh", "-c", 'exec "$@" 2>"$MEMLS_E2E_STDERR"', "memls-serve", *command]
    lsp = await ClientServerConfig(
        server_command=shell, server_env={**env, "MEMLS_E2E_STDERR": str(stderr)}
    ).start()
    lsp.notified = []

    @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        return None

    for method in (CHANGED, CONFLICTS):

        @lsp.feature(method)
        def on_note(params, method=method):
            lsp.notified.append(method)

    await lsp.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(editor),
            workspace_folders=[
                types.WorkspaceFolder(uri=uris.from_fs_path(str(root)), name=root.name)
            ],
        )
    )
    lsp.stderr_path = stderr
    lsp.pid = lsp._server.pid  # `exec`: the shell's pid is the server's
    return lsp


async def store_all(client, items: list[str]) -> list[str]:
    """Store every text through this session, IN_FLIGHT requests at a time; the ids in order."""
    gate = asyncio.Semaphore(IN_FLIGHT)

    async def one(text):
        async with gate:
            return (await call(client, "memory/store", text=text))["id"]

    return list(await asyncio.gather(*(one(t) for t in items)))


async def real_cli(data: Path, project: str, items: list[str], env: dict) -> list[dict]:
    """`memls store -p PROJECT TEXT --json`, one real process after another."""
    out = []
    for text in items:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "memls",
            "--data-dir",
            str(data),
            "store",
            "-p",
            project,
            text,
            "--json",
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        stdout, stderr = await proc.communicate()
        out.append({"rc": proc.returncode, "stdout": stdout.decode(), "stderr": stderr.decode()})
    return out


def lock_holders(path: Path) -> set[int]:
    """The pids holding a flock on `path`, from /proc/locks (Linux)."""
    st = path.stat()
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF" (blocked waiters have a "->")
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        if fields[5].lower() == inode.lower():
            pids.add(int(fields[4]))
    return pids


def open_files_under(pid: int, directory: Path) -> list[Path]:
    """The files under `directory` that process `pid` has open (Linux /proc/<pid>/fd)."""
    root = str(directory.resolve()) + os.sep
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.startswith(root):
            found.append(Path(target))
    return found


def socket_hello(sock_path: Path) -> dict:
    """Shake hands with whoever serves the owner socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(sock_path))
        s.sendall(
            json.dumps(
                {"id": 1, "method": "$/hello", "params": {"front": "test", "pid": os.getpid()}}
            ).encode()
            + b"\n"
        )
        line = s.makefile("rb").readline()
    return json.loads(line)["result"]


def flushed(data: Path, timeout: float = 600.0) -> bool:
    """Ask the owner, through its socket, to answer once every acknowledged write is indexed."""
    with RemoteEngine.connect(data, front="test") as owner:
        return owner.flush(timeout)


def bad_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(p.search(line) for p in BAD)]


@pytest.mark.asyncio
@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux /proc/locks")
async def test_two_sessions_and_the_cli_store_concurrently(tmp_path):
    started = time.monotonic()
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(AGENTS)
    project = str(root.resolve())
    data = tmp_path / "data"
    env = {**os.environ, "MEMLS_DATA_DIR": str(data)}
    logs = tmp_path / "logs"
    logs.mkdir()

    # both sessions start at once: one wins the store, the other joins it through the socket
    started_sessions = await asyncio.gather(
        start_session("visual-studio-code", root, env, logs / "a.stderr"),
        start_session("neovim", root, env, logs / "b.stderr"),
        return_exceptions=True,
    )
    sessions = [s for s in started_sessions if not isinstance(s, BaseException)]
    cli_loop = None
    owner_pid = None
    try:
        for s in started_sessions:
            if isinstance(s, BaseException):
                raise s
        a, b = sessions
        health_a, health_b = await asyncio.gather(
            call(a, "memory/health"), call(b, "memory/health")
        )
        assert health_a["dataDir"] == health_b["dataDir"] == str(data.resolve())
        assert (data / "memls.sock").exists()
        owner = lock_holders(data / "owner.lock")
        assert len(owner) == 1 and owner <= {a.pid, b.pid}, (owner, a.pid, b.pid)
        owner_pid = owner.pop()

        # the CLI loop connects, then everyone starts at once
        cli_out = tmp_path / "cli.json"
        cli_texts = texts("cli", PER_WRITER)
        with open(logs / "cli.stderr", "w") as cli_stderr:
            cli_loop = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    CLI_LOOP,
                    str(data),
                    project,
                    str(cli_out),
                    json.dumps(cli_texts),
                ],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=cli_stderr,
                text=True,
            )
        assert cli_loop.stdout.readline().strip() == "ready"
        real_texts = [
            f"real cli memory {i}: the {w} pipeline runs nightly"
            for i, w in enumerate(WORDS[:REAL_CLI])
        ]
        cli_loop.stdin.write("go\n")
        cli_loop.stdin.close()
        writes = time.monotonic()
        ids_a, ids_b, real = await asyncio.gather(
            store_all(a, texts("alpha-session", PER_WRITER)),
            store_all(b, texts("bravo-session", PER_WRITER)),
            real_cli(data, project, real_texts, env),
        )
        lsp_seconds = time.monotonic() - writes
        cli_rc = await asyncio.get_running_loop().run_in_executor(
            None, lambda: cli_loop.wait(timeout=120)
        )
        write_seconds = time.monotonic() - writes
        assert cli_rc == 0, (logs / "cli.stderr").read_text()[-3000:]
        cli = json.loads(cli_out.read_text())
        assert not cli["errors"], cli["errors"][:3]
        for r in real:
            assert r["rc"] == 0, r
        ids_real = [json.loads(r["stdout"])["id"] for r in real]
        ids_cli = cli["ids"]

        # every writer got its memories acknowledged, each a new one
        for ids in (ids_a, ids_b, ids_cli):
            assert len(ids) == PER_WRITER and len(set(ids)) == PER_WRITER and all(ids)
        acknowledged = set(ids_a) | set(ids_b) | set(ids_cli) | set(ids_real)
        assert len(acknowledged) == 3 * PER_WRITER + REAL_CLI

        # all present: counted, listed (through either session) and readable
        notes = len(NOTES)
        total = 3 * PER_WRITER + REAL_CLI + notes
        stats = await call(b, "memory/stats")
        assert stats["project"] == project and stats["memories"] == total, stats
        listed = await call(a, "memory/list", limit=1000)
        listed_ids = {m["id"] for m in listed["memories"]}
        assert acknowledged <= listed_ids and len(listed_ids) == total
        assert {m["content"] for m in listed["memories"] if m["sourceUri"]} == set(NOTES)
        # and the writers really overlapped in time
        at = {m["id"]: m["recordedAt"] for m in listed["memories"]}
        spans = [
            (min(at[i] for i in ids), max(at[i] for i in ids)) for ids in (ids_a, ids_b, ids_cli)
        ]
        assert max(s for s, _ in spans) < min(e for _, e in spans), spans
        for mid in (ids_a[0], ids_b[-1], ids_cli[PER_WRITER // 2], ids_real[-1]):
            assert (await call(b, "memory/get", id=mid))["id"] == mid

        # the index is consistent: once nothing is pending, SQLite and Chroma agree. The owner
        # says when its indexer has caught up ($/flush on its socket returns then).
        assert await asyncio.get_running_loop().run_in_executor(None, flushed, data)
        doctor = await call(a, "memory/doctor")
        assert doctor["pending"] == 0, doctor
        assert doctor["ok"], doctor["problems"]
        assert doctor["memories"] == doctor["indexed"] == total, doctor
        assert not doctor["missing"] and not doctor["extra"] and not doctor["stale"]
        doctor_b = await call(b, "memory/doctor")
        assert doctor_b["ok"] and doctor_b["indexed"] == total
        for who, text, mid in (
            ("a", texts("alpha-session", PER_WRITER)[7], ids_a[7]),
            (
                "b",
                texts("bravo-session", PER_WRITER)[PER_WRITER * 2 // 5],
                ids_b[PER_WRITER * 2 // 5],
            ),
            ("cli", cli_texts[PER_WRITER * 5 // 6], ids_cli[PER_WRITER * 5 // 6]),
        ):
            found = await call(a if who == "b" else b, "memory/query", query=text, k=5)
            assert mid in [h["id"] for h in found["results"]], (who, text, found)
            assert not found["degraded"], found["degraded"]

        # exactly one owner, the same all along: one session holds the lock and serves the
        # socket; the other session and the CLI went through it
        assert lock_holders(data / "owner.lock") == {owner_pid}
        assert (data / "owner.lock").read_text().strip() == str(owner_pid)
        hello = socket_hello(data / "memls.sock")
        assert hello["pid"] == owner_pid and hello["dataDir"] == str(data.resolve())
        assert hello["front"] == "lsp"
        assert cli["handle"] == "RemoteEngine" and cli["owner_pid"] == owner_pid
        assert [p.name for p in data.glob("*.sock")] == ["memls.sock"]
        joiner = b if owner_pid == a.pid else a
        assert not open_files_under(joiner.pid, data)  # no SQLite, no Chroma: only the socket
        assert "memls.sqlite3" in {p.name for p in open_files_under(owner_pid, data)}
        assert b.notified and a.notified  # both sessions heard of the writes
    finally:
        if cli_loop is not None:
            if cli_loop.poll() is None:
                cli_loop.kill()
                cli_loop.wait()
            cli_loop.stdout.close()
            cli_loop.stdin.close()
        # the joiner first, then the owner
        for lsp in sorted(sessions, key=lambda s: s.pid == owner_pid if owner_pid else 0):
            await lsp.shutdown_session()

    # no process logged a locked database, a Chroma error or a traceback
    for name in ("a.stderr", "b.stderr", "cli.stderr"):
        found = bad_lines((logs / name).read_text())
        assert not found, (name, found)
    for r in real:
        assert not bad_lines(r["stderr"]), r
    for lsp in sessions:
        shown = [
            m.message
            for m in lsp.messages + lsp.log_messages
            if m.type in (types.MessageType.Error, types.MessageType.Warning)
        ]
        assert not shown, shown
    print(
        f"\nwrites {write_seconds:.1f} s (LSP sessions {lsp_seconds:.1f} s, CLI loop "
        f"{cli['seconds']:.1f} s); total {time.monotonic() - started:.1f} s"
    )
