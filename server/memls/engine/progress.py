"""Long work told as it goes: begin, reports (at most every `interval` seconds, and whenever
a phase starts or ends), end. The engine hands each payload to a callback (its listeners);
fronts draw it (a bar on a terminal, `$/progress` in the editor). Nothing here knows them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from memls import protocol


class Work:
    def __init__(
        self,
        tell: Callable[[protocol.ProgressNotification], Any],
        project: str,
        title: Any,
        *,
        interval: float = 0.1,
    ) -> None:
        self.tell = tell
        self.project = project
        self.title = title
        self.token = uuid.uuid4().hex
        self.interval = interval
        self.phase = ""
        self.total = 0
        self.done = 0
        self._last = 0.0

    def start(self, phase: str, total: int, message: str | None = None) -> None:
        """A phase begins (the first one begins the work): done 0 of `total`."""
        self.phase, self.total, self.done = phase, max(0, total), 0
        self._send(message)

    def advance(self, done: int, message: str | None = None) -> None:
        """`done` of the phase's total are done (told now if `interval` has passed, or all)."""
        self.done = max(0, min(done, self.total))
        if self.done >= self.total or time.monotonic() - self._last >= self.interval:
            self._send(message)

    def end(self, message: str | None = None) -> None:
        self._send(message, finished=True)

    def _send(self, message: str | None, finished: bool = False) -> None:
        self._last = time.monotonic()
        self.tell(
            protocol.ProgressNotification(
                project=self.project,
                token=self.token,
                title=self.title,
                phase=self.phase,
                done=self.done,
                total=self.total,
                finished=finished,
                message=message,
            )
        )
