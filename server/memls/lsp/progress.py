"""Work-done progress (`$/progress`) for long work, when the client declared it can show it;
a no-op otherwise. Tokens are never reused (pygls keeps them): a fresh uuid each time."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from lsprotocol import types


class Progress:
    """begin -> report* -> end of one piece of work; silent when the client cannot show it."""

    def __init__(self, server: Any, title: str) -> None:
        self.server = server
        self.title = title
        self.token: str | None = None

    async def begin(self, message: str) -> Progress:
        caps = self.server.client_capabilities.window
        if caps is None or not caps.work_done_progress:
            return self
        token = str(uuid.uuid4())
        try:
            await self.server.work_done_progress.create_async(token)
            self.server.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=self.title, percentage=0, cancellable=False, message=message
                ),
            )
        except Exception:  # noqa: BLE001 - a client may refuse progress
            return self
        self.token = token
        return self

    @property
    def shown(self) -> bool:
        return self.token is not None

    def report(self, message: str, percentage: int | None = None) -> None:
        if self.token is not None:
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    def end(self, message: str) -> None:
        if self.token is not None:
            self.server.work_done_progress.end(
                self.token, types.WorkDoneProgressEnd(message=message)
            )
            self.token = None


class EngineWork:
    """The engine's memory/progress notifications (reindex, import, ingest: whoever asked,
    this window or the CLI through the owner) shown to the editor as `$/progress`: one
    work-done token per piece of engine work, begin -> report* -> end."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.queues: dict[str, asyncio.Queue[Any]] = {}

    def relay(self, payload: Any) -> None:
        """On the event loop: one notification of the engine."""
        queue = self.queues.get(payload.token)
        if queue is None:
            if payload.finished:
                return  # its begin was never seen here: nothing to end
            queue = self.queues[payload.token] = asyncio.Queue()
            self.server.spawn(self._show(payload.token, queue))
        queue.put_nowait(payload)

    async def _show(self, token: str, queue: asyncio.Queue[Any]) -> None:
        try:
            first = await queue.get()
            progress = await Progress(self.server, f"memls: {first.title}").begin(_says(first))
            while True:
                item = await queue.get()
                if item.finished:
                    progress.end(item.message or f"{item.title} done")
                    return
                percentage = int(100 * item.done / item.total) if item.total else None
                progress.report(_says(item), percentage)
        finally:
            self.queues.pop(token, None)


def _says(item: Any) -> str:
    if item.total:
        return f"{item.phase} {item.done}/{item.total}"
    return item.message or item.phase
