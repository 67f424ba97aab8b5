"""A project's note files on disk: found by glob, read, and the folders worth watching.

Watching is cheap on purpose: not a recursive watch of the whole tree (which would put an
inotify watch on every folder of `node_modules` and `.git`), but the project folder itself,
each folder that holds a note, and each folder a glob's fixed prefix names (`docs/adr` for
`docs/adr/**/*.md`, with its subfolders), or the nearest existing folder above it so that
its creation is seen.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from memls.notes.globs import matches

SKIP_DIRS = frozenset(
    {
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
)
MAX_NOTE_BYTES = 1024 * 1024
WILDCARDS = frozenset("*?[")


def _walk(root: Path) -> Iterable[tuple[str, list[str], list[str]]]:
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        yield directory, dirs, files


def discover(root: Path, globs: Iterable[str]) -> list[Path]:
    """Note files under a folder, by glob on the path relative to it."""
    patterns = tuple(globs)
    found = []
    for directory, _dirs, files in _walk(root):
        for name in sorted(files):
            path = Path(directory) / name
            if matches(path.relative_to(root).as_posix(), patterns):
                found.append(path)
    return found


def fixed_prefix(glob: str) -> str:
    """The folder a glob names before its first wildcard ("" for the project folder)."""
    parts = glob.split("/")
    fixed: list[str] = []
    for part in parts[:-1]:
        if WILDCARDS & set(part):
            break
        fixed.append(part)
    return "/".join(fixed)


def watch_folders(root: Path, globs: Iterable[str], notes: Iterable[Path]) -> set[Path]:
    """The folders to watch (not recursively) so that every note, and every new note a glob
    names, is seen: see the module doc."""
    folders = {root}
    folders.update(path.parent for path in notes)
    for glob in globs:
        prefix = fixed_prefix(glob)
        if not prefix:
            continue
        base = root / prefix
        if base.is_dir():
            folders.update(Path(d) for d, _dirs, _files in _walk(base))
        else:
            above = base.parent
            while above != root and not above.is_dir():
                above = above.parent
            folders.add(above)
    return {f for f in folders if f.is_dir()}


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
