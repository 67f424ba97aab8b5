"""Helpers shared by the tests that drive the daemon with a real LSP client."""

from __future__ import annotations

import asyncio
import inspect
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any

# What the server sends when something it knows changed: a test waits for one of these, then
# looks again (never a sleep between looks).
CHANGED = "memory/changed"  # memories written (stored, synced, forgotten)
CONFLICTS = "memory/conflicts"  # the contradiction check found pairs
DIAGNOSTICS = "textDocument/publishDiagnostics"  # what an editor shows on a note
PROGRESS = "$/progress"  # work-done progress (begin, report, end)

EDITORS = ["visual-studio-code", "neovim"]
AGENTS = """# Agent notes

## Conventions
- We use yarn for package management
- The API listens on port 8080
- Tests run with pytest
"""
NOTE_UNITS = 4  # three items of AGENTS.md, one of .memls/decisions.md


def plain(value):
    """Custom request results come back from pygls as namedtuples: make them plain data."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


async def call(client, method, **params):
    """A custom request (`memory/*`), its result as plain data."""
    return plain(await client.protocol.send_request_async(method, params))


async def wait_until(
    client,
    method: str,
    read: Callable[[], Any],
    check: Callable[[Any], Any] = bool,
    *,
    what: str,
    timeout: float = 60.0,
) -> Any:
    """Read (`read()`, plain or async) until `check` accepts the value, and between reads wait
    for the server's next `method` notification: the event that can change the answer.

    The wait for the next notification is armed before each read, so one that arrives while
    a read (a request) is in flight is not missed. Returns the accepted value; fails with
    `what` and the last value after `timeout` seconds without one."""
    value: Any = None
    try:
        async with asyncio.timeout(timeout):
            while True:
                event = client.protocol.wait_for_notification(method)
                value = read()
                if inspect.isawaitable(value):
                    value = await value
                if check(value):
                    return value
                await asyncio.wrap_future(event)
    except TimeoutError:
        raise AssertionError(
            f"no {method} made {what} true within {timeout} s; last: {value!r}"
        ) from None


def project_of(client) -> str:
    """The project of the client's workspace folder (its resolved path)."""
    return str(client.root.resolve())


async def note_units(client) -> dict[str, dict]:
    """The memories that came from note files, by content."""
    listed = await call(client, "memory/list")
    return {m["content"]: m for m in listed["memories"] if m["sourceUri"]}


async def notes_indexed(client) -> dict[str, dict]:
    """Once the workspace's notes are indexed (each note synced is a `memory/changed`)."""
    return await wait_until(
        client,
        CHANGED,
        lambda: note_units(client),
        lambda units: len(units) == NOTE_UNITS,
        what="initial indexing",
    )


def free_port() -> int:
    """A loopback TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 60.0, proc: subprocess.Popen | None = None) -> bool:
    """True once something accepts connections on 127.0.0.1:port (False after timeout, or at
    once if `proc` exits first).

    Not an event wait, on purpose: the process tells nobody when its socket is bound (a line on
    stderr would come before the bind), so the real condition, a connection being accepted, is
    tried until a deadline. A refused connection returns at once, hence the short pause between
    tries."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False
