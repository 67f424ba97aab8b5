"""Workspace notes: discover, read (open buffers win over disk), debounce, sync to the engine."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from pygls import uris

from memls.notes.globs import DEFAULT_GLOBS, NoteKind, default_type, matches, note_kind

SKIP_DIRS = {
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    "dist",
    "build",
    ".tox",
    ".hypothesis",
}
MAX_NOTE_BYTES = 1024 * 1024


def discover(root: Path, globs: list[str]) -> list[Path]:
    """Note files under a folder, by glob on the path relative to it."""
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS or d in (".memls",))
        for name in sorted(files):
            path = Path(directory) / name
            rel = path.relative_to(root).as_posix()
            if matches(rel, globs):
                found.append(path)
    return found


class Unreadable(Exception):
    """The note exists but is not indexed now (too large, unreadable): its memories stay."""


def read_disk(path: Path) -> str | None:
    """The note's text, or None when it no longer exists (its units are then forgotten)."""
    try:
        if path.stat().st_size > MAX_NOTE_BYTES:
            raise Unreadable(f"{path} is larger than {MAX_NOTE_BYTES} bytes")
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (IsADirectoryError, PermissionError, OSError) as exc:
        raise Unreadable(f"{path}: {exc}") from None


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
    "discover",
    "is_note",
    "kind_of",
    "note_type",
    "read_disk",
]
