"""Helpers for the tests that drive the real `memls mcp` subprocess with the official SDK's
client (`mcp.client.stdio`); tests/mcp/."""

from __future__ import annotations

import asyncio
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.client.stdio import stdio_client

from daemon_helpers import stop_daemon
from mcp import ClientSession, StdioServerParameters, types

LEXICAL = "[index]\nvectors = false\n"


class Events:
    """Notifications as they arrive; `wait` returns the first (past or future) that matches."""

    def __init__(self) -> None:
        self.seen: list = []
        self.waiters: list[tuple] = []

    def add(self, item) -> None:
        self.seen.append(item)
        for predicate, future in list(self.waiters):
            if not future.done() and predicate(item):
                future.set_result(item)

    def mark(self) -> int:
        """A point in the stream: `wait(since=mark)` ignores what came before it."""
        return len(self.seen)

    async def wait(self, predicate, timeout: float = 180.0, what: str = "an event", since: int = 0):
        for item in self.seen[since:]:
            if predicate(item):
                return item
        future = asyncio.get_running_loop().create_future()
        self.waiters.append((predicate, future))
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise AssertionError(f"timed out waiting for {what}") from None
        finally:
            self.waiters.remove((predicate, future))


def lexical(data_dir: Path) -> Path:
    """A data directory whose engine runs BM25 only (no Chroma, no models): for the tests of
    scope and arguments, where retrieval is not the point."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "config.toml").write_text(LEXICAL)
    return data_dir


@asynccontextmanager
async def mcp_session(
    data_dir: Path,
    roots: list[Path] | None = None,
    *,
    args=(),
    client: str = "test-agent",
    cwd: Path | None = None,
):
    """A ClientSession to a fresh `memls mcp` process. roots=None: the client offers no roots
    capability at all."""
    callback = None
    if roots is not None:

        async def callback(_ctx):
            return types.ListRootsResult(
                roots=[types.Root(uri=p.resolve().as_uri(), name=p.name) for p in roots]
            )

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memls", "--data-dir", str(data_dir), "mcp", *args],
        env={**os.environ},
        cwd=str(cwd or data_dir.parent),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read,
            write,
            list_roots_callback=callback,
            client_info=types.Implementation(name=client, version="1.0"),
        ) as session:
            session.init = await session.initialize()
            try:
                yield session
            finally:
                stop_daemon(data_dir)  # `memls mcp` started it; it would go on after the session


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def ok(session: ClientSession, tool: str, **arguments) -> dict:
    """Call a tool that must succeed; its structured content."""
    result = await session.call_tool(tool, arguments)
    assert not result.isError, f"{tool}: {text_of(result)}"
    assert result.structuredContent is not None
    return result.structuredContent


async def refused(session: ClientSession, tool: str, **arguments) -> str:
    """Call a tool that must fail with a tool error; its text."""
    result = await session.call_tool(tool, arguments)
    assert result.isError, f"{tool} should have failed: {text_of(result)}"
    assert result.structuredContent is None
    text = text_of(result)
    assert "Traceback" not in text
    return text
