"""What the no-network test needs (tests/privacy/test_network.py): strace's command, a reader of
its output that finds every address a process sent to or connected to beyond this machine, and
the scenario it traces, run as a script (`python tests/privacy_helpers.py WORK TRACE`): every
front of memls at work on two stores, and every process they start.

Why strace and not a network namespace: it needs no privilege beyond tracing one's own children
(an unprivileged user namespace is often refused in containers and CI), it records the attempt
itself, failed or not (a namespace with no route makes the resolver give up without a trace),
and it names the process and the address, so a failure says who tried to reach what."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# -f: every process the traced one starts, detached daemons included; --seccomp-bpf: only the
# traced calls stop the process (the rest run at full speed); -ttt: wall-clock times, to time
# onnxruntime's telemetry from the moment its library was opened. openat finds that moment,
# execve and clone name the process of each thread; -s 128 shows enough of a DNS query to read
# the name it asks for.
STRACE = [
    "strace", "-f", "-q", "-ttt", "-s", "128", "--seccomp-bpf",
    "-e", "trace=execve,clone,clone3,fork,vfork,openat,connect,sendto,sendmsg,sendmmsg",
]  # fmt: skip

# onnxruntime's telemetry (1DS) asks the resolver for mobile.events.data.microsoft.com 9.1 s
# after its library (onnxruntime_pybind11_state) is opened, then again 5.5, 8.4, 21, 43 ... s
# later, whatever the process does meanwhile (strace -ttt, openat of the library to the first
# connect to port 53: 9.08 s in the daemon `memls serve --socket`, 8.99-9.00 s in three runs of
# a bare `import onnxruntime`; nothing at all from a process that exits before). A process that
# opened the library is therefore watched until FIRST_LOOKUP_S + MARGIN_S after that moment.
ORT_LIBRARY = "onnxruntime_pybind11_state"
FIRST_LOOKUP_S = 9.1
MARGIN_S = 3.0
WATCH_S = FIRST_LOOKUP_S + MARGIN_S

# Sockets that stay on this machine. AF_NETLINK talks to the kernel (the resolver asks it which
# addresses this host has); AF_UNSPEC in connect() dissolves a datagram socket's association.
LOCAL_FAMILIES = {"AF_UNIX", "AF_NETLINK", "AF_UNSPEC"}
DNS_PORTS = {53, 853, 5353}  # a lookup goes out through any resolver, a local stub included
# glibc's resolver reaches systemd-resolved or nscd over these sockets: a lookup, too
RESOLVER_SOCKETS = ("/run/systemd/resolve/", "/var/run/nscd/", "/run/nscd/")

_LINE = re.compile(r"^(?P<pid>\d+)\s+(?P<time>\d+\.\d+)\s+(?P<rest>.*)$")
_ADDRESS = re.compile(r"\{sa_family=(?P<family>AF_\w+)(?P<fields>[^{}]*)\}")
_PORT = re.compile(r"port=htons\((\d+)\)")
_IP4 = re.compile(r'inet_addr\("([^"]+)"\)')
_IP6 = re.compile(r'inet_pton\(AF_INET6, "([^"]+)"')
_PATH = re.compile(r'sun_path=@?"([^"]*)"')
_EXECVE = re.compile(r'^execve\("[^"]*", \[(?P<argv>.*?)\]')
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_CLONE = re.compile(r"^(?:<\.\.\. )?(?:clone3?|v?fork)\b.*= (?P<child>\d+)$")


@dataclass(frozen=True)
class Contact:
    """One address a traced call sent to or connected to, and why it leaves the machine."""

    pid: int
    time: float
    why: str
    line: str


def _lines(trace: str):
    for raw in trace.splitlines():
        m = _LINE.match(raw)
        if m:
            yield int(m["pid"]), float(m["time"]), m["rest"]


def _leaves(family: str, fields: str) -> str | None:
    """Why a socket address leaves this machine (None when it does not)."""
    port_match = _PORT.search(fields)
    port = int(port_match.group(1)) if port_match else None
    if family == "AF_UNIX":
        path = _PATH.search(fields)
        if path and path.group(1).startswith(RESOLVER_SOCKETS):
            return f"a name lookup through {path.group(1)}"
        return None
    if family in LOCAL_FAMILIES:
        return None
    if family not in ("AF_INET", "AF_INET6"):
        return f"a {family} socket"
    found = (_IP4 if family == "AF_INET" else _IP6).search(fields)
    if found is None:
        return f"an {family} address strace did not show"
    address = ipaddress.ip_address(found.group(1))
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if port in DNS_PORTS:
        return f"a DNS query to {address} port {port}"
    if not address.is_loopback:
        return f"{address} port {port}"
    return None


SENDS = ("connect(", "sendto(", "sendmsg(", "sendmmsg(")


def dns_name(rest: str) -> str | None:
    """The name a DNS query asks for, read from the bytes a send call shows (strace escapes
    them as C does; the question's name starts after the 12-byte header), or None."""
    found = _STRING.search(rest)
    if found is None or rest.startswith("connect("):
        return None
    data = found.group(1).encode("latin-1").decode("unicode_escape").encode("latin-1")
    labels, at = [], 12
    while at < len(data) and 0 < data[at] < 64 and at + 1 + data[at] <= len(data):
        label = data[at + 1 : at + 1 + data[at]]
        if not label.isascii() or not label.decode().replace("-", "").isalnum():
            return None
        labels.append(label.decode())
        at += 1 + data[at]
    return ".".join(labels) if len(labels) >= 2 else None


def library_opens(text: str, library: str = ORT_LIBRARY) -> dict[int, float]:
    """Thread id -> when it first opened `library` (its shared object)."""
    opened: dict[int, float] = {}
    for pid, when, rest in _lines(text):
        if rest.startswith("openat(") and library in rest:
            opened.setdefault(pid, when)
    return opened


class Trace:
    """strace's output, read once: what left, who opened onnxruntime, who ran what."""

    def __init__(self, text: str) -> None:
        self.contacts: list[Contact] = []  # every call whose address leaves the machine
        self.last: dict[int, float] = {}  # thread id -> its last line (its exit, once exited)
        self.ran: dict[int, str] = {}  # pid -> the command line it ran (its last execve)
        self.parent: dict[int, int] = {}  # thread id -> the one that cloned or forked it
        self.asked: set[str] = set()  # the names DNS queries asked for
        self.start = 0.0  # the first line's time
        for pid, when, rest in _lines(text):
            self.start = self.start or when
            self.last[pid] = when
            if rest.startswith(SENDS):
                for m in _ADDRESS.finditer(rest):
                    why = _leaves(m["family"], m["fields"])
                    if why is not None:
                        self.contacts.append(Contact(pid, when, why, rest))
                name = dns_name(rest)
                if name is not None:
                    self.asked.add(name)
            elif m := _EXECVE.match(rest):
                self.ran[pid] = " ".join(_STRING.findall(m["argv"]))
            elif m := _CLONE.match(rest):
                self.parent.setdefault(int(m["child"]), pid)
        self.opened = library_opens(text)  # thread id -> when it opened onnxruntime's library

    def process(self, pid: int) -> int:
        """The process a thread belongs to: the nearest of it and its parents that ran a
        command (a thread's parent is a thread of its process)."""
        while pid not in self.ran and pid in self.parent:
            pid = self.parent[pid]
        return pid

    def command(self, pid: int) -> str:
        return self.ran.get(self.process(pid), f"pid {pid}")

    def started_by(self, pid: int) -> str:
        """The command line of the process that started process `pid`."""
        return self.command(self.parent.get(self.process(pid), pid))

    def watched(self) -> dict[int, float]:
        """Process -> seconds it was traced after one of its threads opened onnxruntime."""
        out: dict[int, float] = {}
        for tid, when in self.opened.items():
            process = self.process(tid)
            out[process] = min(out.get(process, 1e9), self.last[process] - when)
        return out

    def report(self) -> str:
        """The calls that left, each with its process and when, for a failure's message."""
        asked = f" (names looked up: {', '.join(sorted(self.asked))})" if self.asked else ""
        lines = [f"{len(self.contacts)} call(s) reached beyond this machine{asked}:"]
        for c in self.contacts:
            opened = self.opened_in(c.pid)
            after = (
                "" if opened is None else f", {c.time - opened:.1f} s after it opened onnxruntime"
            )
            lines.append(
                f"  {self.command(c.pid)} (pid {c.pid}), +{c.time - self.start:.1f} s{after}"
            )
            lines.append(f"    {c.why}: {c.line[:200]}")
        return "\n".join(lines)

    def opened_in(self, pid: int) -> float | None:
        process = self.process(pid)
        times = [w for tid, w in self.opened.items() if self.process(tid) == process]
        return min(times, default=None)


def strace_unavailable() -> str | None:
    """Why strace cannot trace a child here (missing, or ptrace refused), or None."""
    try:
        done = subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=connect", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except FileNotFoundError:
        return "strace is not installed (`make test` installs Debian's strace via apt-get)"
    if done.returncode != 0:
        return f"strace cannot trace here: {done.stderr.strip()[:300]}"
    return None


# -- the scenario (run as a script, under strace) ----------------------------------------------

NOTE = "- Card numbers are never logged, not even masked.\n"
STORED = "Deploys go out on Tuesdays through ArgoCD"
EDITOR_STORED = "The API listens on port 8080"
CODE = 'def deploy_day():\n    return "Tuesday"\n'


def _memls(data: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memls", "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"memls {' '.join(args)}: {done.stderr}"
    return done.stdout


async def _editor(data: Path, project: Path):
    """`memls serve --stdio` owning its own store (an editor's daemon), initialized."""
    from lsprotocol import types
    from pygls import uris
    from pytest_lsp import ClientServerConfig, client_capabilities

    env = {**os.environ, "MEMLS_DATA_DIR": str(data)}
    command = [sys.executable, "-m", "memls", "serve", "--stdio"]
    client = await ClientServerConfig(server_command=command, server_env=env).start()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[
                types.WorkspaceFolder(uri=uris.from_fs_path(str(project)), name="p")
            ],
        )
    )
    return client


def _until_watched(trace: Path) -> float:
    """Sleep until every process that has opened onnxruntime's library was watched WATCH_S
    seconds since (a wait on a measured delay: no event says "telemetry did not happen");
    the seconds slept."""
    opened = library_opens(trace.read_text(errors="replace"))
    assert opened, f"no process opened {ORT_LIBRARY}: the models never loaded"
    left = max(0.0, max(opened.values()) + WATCH_S - time.time())
    time.sleep(left)
    return left


async def scenario(work: Path, trace: Path, given: dict[str, str]) -> dict:
    """Every front at work: the hook starts the owner of `data`, the command line stores a
    memory citing code, queries and briefs through it, the hook is briefed, `memls mcp`
    recalls, and an editor's `memls serve --stdio` owns a second store, stores and queries;
    all stay up until onnxruntime's telemetry would have spoken in each process that loaded
    the models."""
    from daemon_helpers import stop_daemon
    from hook_helpers import hook, payload
    from lsp_helpers import call
    from mcp_helpers import mcp_session, ok

    # the helpers imported memls, which set its own values in this process: the processes
    # started here get the user's environment as it was given to this script
    os.environ.clear()
    os.environ.update(given)
    project, data, editor_data = work / "shop", work / "data", work / "editor-data"
    project.mkdir()
    (project / "CLAUDE.md").write_text(NOTE)
    (project / "deploy.py").write_text(CODE)  # cited: tree-sitter, git and the watcher run
    project = project.resolve()
    started = time.monotonic()
    seen: dict[str, float] = {}  # each front: seconds from the start to its last answer

    def done(front: str) -> None:
        seen[front] = round(time.monotonic() - started, 2)

    editor = await _editor(editor_data, project)  # its models load while the rest goes on
    try:
        # no daemon serves `data`: the hook starts `memls serve --socket` (on a loaded machine
        # its briefing may come too late for this session: it never blocks one)
        start = payload("session_start.json", project)
        first = await asyncio.to_thread(hook, data, project, start, "--timeout", "15")
        assert first.returncode == 0, first
        stored = json.loads(
            _memls(data, "store", STORED, "-p", str(project), "--cite", "deploy.py:1-2", "--json")
        )
        found = json.loads(
            _memls(data, "query", "when do deploys go out", "-p", str(project), "--json")
        )
        assert stored["id"] in [r["id"] for r in found["results"]], found
        briefing = _memls(data, "context", "-p", str(project), "--prompt", "deploys")
        assert "ArgoCD" in briefing, briefing
        done("cli")
        compacted = payload("session_start_compact.json", project)  # briefed again
        again = await asyncio.to_thread(hook, data, project, compacted, "--timeout", "15")
        assert again.returncode == 0 and "Card numbers" in again.stdout, again
        done("hook")
        async with mcp_session(data, roots=[project]) as session:
            recalled = await ok(session, "recall", query="how do we deploy")
            assert stored["id"] in [r["id"] for r in recalled["results"]], recalled
            done("mcp")
            mine = await call(editor, "memory/store", text=EDITOR_STORED, type="fact")
            hits = await call(editor, "memory/query", query="which port does the API use")
            assert mine["id"] in [r["id"] for r in hits["results"]], hits
            done("lsp")
            seen["waited"] = round(await asyncio.to_thread(_until_watched, trace), 2)
        # leaving the session stopped the daemon the hook started (mcp_session's teardown)
    finally:
        await editor.shutdown_session()
        stop_daemon(data)
    done("stopped")
    return seen


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))  # the other helpers
    given = dict(os.environ)
    result = asyncio.run(scenario(Path(sys.argv[1]), Path(sys.argv[2]), given))
    print(json.dumps(result))
