"""The owner's watchers' one loop: a set of folders watched (not recursively) with watchfiles,
read again whenever `restart` is set, until `stop` is."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import watchfiles

log = logging.getLogger("memls.daemon.folders")


def follow(
    folders: Callable[[], list[str]],
    changed: Callable[[set[tuple[watchfiles.Change, str]]], Any],
    *,
    stop: threading.Event,
    restart: threading.Event,
    watching: threading.Event,
    debounce_ms: int,
    step_ms: int,
    what: str,
    settled: Callable[[], Any] | None = None,
) -> None:
    """Watch `folders()`; each batch of changes goes to `changed`. `watching` is set once a
    watch is in place (it timed out once), when `settled` is called too; a folder that
    vanishes mid-watch makes it read the folders again."""
    while not stop.is_set():
        restart.clear()
        watching.clear()
        chosen = folders()
        if not chosen:
            restart.wait()
            continue
        try:
            for changes in watchfiles.watch(
                *chosen,
                recursive=False,
                debounce=debounce_ms,
                step=step_ms,
                stop_event=restart,
                rust_timeout=500,
                yield_on_timeout=True,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                if changes:
                    changed(changes)
                elif not restart.is_set() and not watching.is_set():
                    watching.set()
                    if settled is not None:
                        settled()
        except Exception:  # a folder vanished mid-watch: read the set again
            log.exception("watching %s failed; watching again", what)
            stop.wait(1.0)
