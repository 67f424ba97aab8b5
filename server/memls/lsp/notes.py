"""What the editor adds to the owner's note watcher: its open buffers, relayed debounced.
Which file is a note, of which kind, under which name, is the owner's to say
(`memls.daemon.notewatch`, asking the table of `memls.notes.conventions`): this front sends a
buffer and keeps the answer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Debouncer:
    """Runs `action(key)` once, `delay` seconds after the last `touch(key)`."""

    def __init__(self, delay: float, action: Callable[[str], Awaitable[None]]) -> None:
        self.delay = delay
        self.action = action
        self._tasks: dict[str, asyncio.Task] = {}

    def touch(self, key: str) -> None:
        old = self._tasks.pop(key, None)
        if old is not None:
            old.cancel()
        self._tasks[key] = asyncio.get_running_loop().create_task(self._later(key))

    async def _later(self, key: str) -> None:
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            return
        self._tasks.pop(key, None)
        await self.action(key)

    def pending(self) -> int:
        return len(self._tasks)
