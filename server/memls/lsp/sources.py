"""Where an LSP connection's bytes come from: a TCP stream or a blocking file (stdin).

Both read a line up to a limit, exactly n bytes, or skip n bytes in small chunks (never
allocating what a client claims)."""

from __future__ import annotations

import asyncio
from typing import BinaryIO

SKIP_CHUNK = 64 * 1024


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

    async def read(self, n: int) -> bytes:
        try:
            return await self.reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial

    async def skip(self, n: int) -> bool:
        while n > 0:
            chunk = await self.reader.read(min(n, SKIP_CHUNK))
            if not chunk:
                return False
            n -= len(chunk)
        return True


class FileSource:
    """A blocking binary file (stdin), read on an executor thread."""

    def __init__(self, stream: BinaryIO, executor=None) -> None:
        self.stream = stream
        self.executor = executor

    async def _call(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)

    async def readline(self, limit: int) -> bytes:
        return await self._call(self.stream.readline, limit)

    async def read(self, n: int) -> bytes:
        def exactly() -> bytes:
            parts, left = [], n
            while left > 0:
                chunk = self.stream.read(left)
                if not chunk:
                    break
                parts.append(chunk)
                left -= len(chunk)
            return b"".join(parts)

        return await self._call(exactly)

    async def skip(self, n: int) -> bool:
        def skip() -> bool:
            left = n
            while left > 0:
                chunk = self.stream.read(min(left, SKIP_CHUNK))
                if not chunk:
                    return False
                left -= len(chunk)
            return True

        return await self._call(skip)
