"""Where an LSP connection's bytes come from: a TCP stream or a blocking file (stdin).

Both read a line up to a limit, or the bytes that have come, at most n: a frame's length is
checked against its limit before it is read, and its body is read as it comes, so that a
body shorter than its Content-Length is found when the next header arrives (`frames`).
After a refused frame a TCP connection lingers: what the client is still sending is
discarded (at most LINGER_BYTES for LINGER_SECONDS) so that closing does not reset the
connection before the client has read the refusal."""

from __future__ import annotations

import asyncio
from typing import BinaryIO

CHUNK = 64 * 1024
LINGER_BYTES = 1024 * 1024
LINGER_SECONDS = 1.0


class StreamSource:
    """An asyncio.StreamReader (a TCP connection)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def readline(self, limit: int) -> bytes:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except asyncio.LimitOverrunError:
            return await self.reader.read(limit)  # a line too long: no newline at the end

    async def read_some(self, n: int) -> bytes:
        """What has come, at most n bytes; b"" at the end of the input."""
        return await self.reader.read(n)

    async def linger(self) -> None:
        left = LINGER_BYTES
        try:
            async with asyncio.timeout(LINGER_SECONDS):
                while left > 0:
                    chunk = await self.reader.read(min(CHUNK, left))
                    if not chunk:
                        return
                    left -= len(chunk)
        except (TimeoutError, OSError):
            pass


class FileSource:
    """A blocking binary file (stdin), read on an executor thread."""

    def __init__(self, stream: BinaryIO, executor=None) -> None:
        self.stream = stream
        self.executor = executor

    async def _call(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    async def readline(self, limit: int) -> bytes:
        return await self._call(self.stream.readline, limit)

    async def read_some(self, n: int) -> bytes:
        """What has come, at most n bytes (one read of the pipe); b"" at the end of the input."""
        read1 = getattr(self.stream, "read1", None)
        return await self._call(read1 or self.stream.read, n)

    async def linger(self) -> None:
        """Nothing to do: a pipe is not reset when its reader goes."""
