"""What the editor adds to the owner's note watcher: which open buffer is a note, of which
kind, under which name, debounced; the disk is the owner's (`memls.notes.files`), and so is
the rule that nothing outside the folder is a note (a link inside it is read under the name
it leads to)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from pygls import uris

from memls.files import LeadsOut, within
from memls.notes.files import Unreadable, read_note
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


def _names(uri: str, root: Path) -> tuple[str, str] | None:
    """(the uri's path relative to the folder as spelled, the note's name there once its links
    are followed, `memls.files.within`); None when it is no file of the folder or its links
    lead out of it (the owner reports those: nothing outside the folder is a note)."""
    path = uris.to_fs_path(uri)
    if not path:
        return None
    try:
        name = within(root, Path(path)).relative_to(root).as_posix()
    except (LeadsOut, OSError, ValueError):
        return None
    try:
        own = Path(path).relative_to(root).as_posix()
    except ValueError:
        own = name
    return own, name


def note_uri(uri: str, root: Path) -> str | None:
    """The uri a note is synced under: its own, or its target's when it is a link inside the
    folder (a note is read once, under the name it leads to); None when it leads out."""
    names = _names(uri, root)
    return None if names is None else uris.from_fs_path(str(root / names[1])) or None


def is_note(uri: str, root: Path, globs: list[str]) -> bool:
    names = _names(uri, root)
    return names is not None and (matches(names[1], globs) or matches(names[0], globs))


def note_type(uri: str, root: Path) -> str:
    names = _names(uri, root)
    return "note" if names is None else default_type(names[1])


def kind_of(uri: str, root: Path, instructions: list[str], records: list[str]) -> NoteKind:
    """Instruction file, decision record or neither, by the note's path in its folder (its
    link's, when the name it leads to says neither)."""
    names = _names(uri, root)
    if names is None:
        return ""
    return note_kind(names[1], instructions, records) or note_kind(names[0], instructions, records)


__all__ = [
    "DEFAULT_GLOBS",
    "Debouncer",
    "Unreadable",
    "LeadsOut",
    "is_note",
    "kind_of",
    "note_type",
    "note_uri",
    "read_note",
]
