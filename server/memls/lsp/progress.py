"""Work-done progress (`$/progress`) for long work, when the client declared it can show it;
a no-op otherwise. Tokens are never reused (pygls keeps them): a fresh uuid each time."""

from __future__ import annotations

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
