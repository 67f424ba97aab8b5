"""Progress bars for long verbs (reindex, import, ingest): drawn on stderr from the engine's
memory/progress notifications (the local engine's, or the owner's over its socket), with the
rate and the time left. Quiet with --json, or when stdout or stderr is not a terminal."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memls import protocol


def wanted(as_json: bool) -> bool:
    return not as_json and sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def shown(engine: Any, project: str | None, title: str, *, quiet: bool) -> Iterator[None]:
    """Draw a bar for the `title` work of `project` while the block runs (nothing if quiet)."""
    if quiet or project is None:
        yield
        return
    from memls.scope import project_key

    project = project_key(project)
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task: Any) -> Text:
            elapsed = task.elapsed
            if not elapsed or not task.completed:
                return Text("")
            return Text(f"{task.completed / elapsed:,.0f}/s", style="progress.data.speed")

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    tasks: dict[str, Any] = {}  # phase -> task id
    lock = threading.Lock()
    finished = threading.Event()

    def listener(method: str, payload: Any) -> None:
        if method != "memory/progress" or not isinstance(payload, protocol.ProgressNotification):
            return
        if payload.project != project or payload.title != title:
            return
        if payload.finished:
            finished.set()
        if payload.total <= 0:
            return
        with lock:
            task = tasks.get(payload.phase)
            if task is None:
                task = tasks[payload.phase] = bar.add_task(
                    f"{title} {payload.phase}", total=payload.total
                )
            bar.update(task, completed=payload.done, total=payload.total)

    engine.subscribe([project])
    engine.listeners.append(listener)
    bar.start()
    try:
        yield
        finished.wait(timeout=2.0)  # through a socket, the last report may trail the reply
    finally:
        engine.listeners.remove(listener)
        bar.stop()
