"""What the editor adds to the owner's note watcher: which open buffer is a note, of which
kind, debounced; the disk is the owner's (`memls.notes.files`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from pygls import uris

from memls.notes.files import Unreadable, read_disk
from memls.notes.globs import DEFAULT_GLOBS, NoteKind, default_type, matches, note_kind


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


def is_note(uri: str, root: Path, globs: list[str]) -> bool:
    path = uris.to_fs_path(uri)
    if not path:
        return False
    try:
        rel = Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return False
    return matches(rel, globs)


def note_type(uri: str, root: Path) -> str:
    path = Path(uris.to_fs_path(uri) or "")
    try:
        return default_type(path.resolve().relative_to(root).as_posix())
    except ValueError:
        return "note"


def kind_of(uri: str, root: Path, instructions: list[str], records: list[str]) -> NoteKind:
    """Instruction file, decision record or neither, by the note's path in its folder."""
    path = Path(uris.to_fs_path(uri) or "")
    try:
        relative = path.resolve().relative_to(root).as_posix()
    except ValueError:
        return ""
    return note_kind(relative, instructions, records)


__all__ = [
    "DEFAULT_GLOBS",
    "Debouncer",
    "Unreadable",
    "is_note",
    "kind_of",
    "note_type",
    "read_disk",
]
