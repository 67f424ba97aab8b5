"""A project's note files on disk: found by glob, read, and the folders worth watching.

Watching is cheap on purpose: not a recursive watch of the whole tree (which would put an
inotify watch on every folder of `node_modules` and `.git`), but the project folder itself,
each folder that holds a note, and each folder a glob's fixed prefix names (`docs/adr` for
`docs/adr/**/*.md`, with its subfolders), or the nearest existing folder above it so that
its creation is seen.

Nothing outside the project's folder is read as its note. A link (to a file or a folder)
whose target is outside the folder, or that goes round a loop, is not followed: `find`
reports it (`Found.refused`) and `read_note` refuses it, checking again as it opens the file
(`memls.files.open_within`), so a link swapped between the two does not lead out either. A
link that stays inside (`CLAUDE.md` -> `AGENTS.md`) is followed, and the note is read once,
under the name it leads to.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memls.files import LeadsOut, open_within, within
from memls.notes.globs import below, matches

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


@dataclass
class Found:
    """What a walk of a project folder found."""

    #: each note, by the name it is read under (a link's target), -> the path relative to the
    #: folder that says its kind (its own when a glob names it, else the link's)
    notes: dict[Path, str] = field(default_factory=dict)
    #: links not followed: they lead out of the folder or round a loop
    refused: list[LeadsOut] = field(default_factory=list)
    #: the links that could be notes or hold notes, followed or not, by their own path
    links: set[Path] = field(default_factory=set)
    #: folders reached through a link to a folder inside the project
    linked_folders: set[Path] = field(default_factory=set)


def find(root: Path, globs: Iterable[str]) -> Found:
    """The notes under a folder, by glob on the path relative to it (see the module doc for
    links). Folders are read in name order, each folder's files before its subfolders."""
    patterns = tuple(globs)
    found = Found()
    real_root = os.path.realpath(root)
    visited: set[str] = set()
    stack: list[tuple[Path, str, bool]] = [(root, real_root, False)]
    while stack:
        folder, real, linked = stack.pop()
        if real in visited:  # a second link to a folder, or a link to a folder above it
            continue
        visited.add(real)
        try:
            entries = sorted(os.scandir(real), key=lambda e: e.name)
        except OSError:
            continue
        if linked:
            found.linked_folders.add(within(root, Path(real)))
        subfolders: list[tuple[Path, str, bool]] = []
        for entry in entries:
            path = folder / entry.name
            relative = path.relative_to(root).as_posix()
            is_link = entry.is_symlink()
            try:
                is_folder = entry.is_dir()  # a link's target's
            except OSError:  # a loop of links: refused below, when a glob names it
                is_folder = False
            if is_folder and entry.name in SKIP_DIRS:
                continue
            if is_folder and not is_link:
                subfolders.append((path, os.path.join(real, entry.name), linked))
                continue
            if not matches(relative, patterns) and not (is_folder and below(relative, patterns)):
                continue
            if is_link:
                found.links.add(path)
            try:
                name = within(root, path)
            except LeadsOut as refused:
                found.refused.append(refused)
                continue
            if is_folder:
                subfolders.append((path, os.path.realpath(path), True))
            elif os.path.isfile(name):  # a link to nothing is no note (yet)
                _add(found, root, name, relative, patterns)
        stack.extend(reversed(subfolders))
    return found


def _add(found: Found, root: Path, name: Path, relative: str, patterns: tuple[str, ...]) -> None:
    own = name.relative_to(root).as_posix()
    if matches(own, patterns):
        found.notes[name] = own
    else:
        found.notes.setdefault(name, relative)


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
    names, is seen: see the module doc. A prefix that leads out of the project is not
    watched (nor read)."""
    folders = {root}
    folders.update(path.parent for path in notes)
    for glob in globs:
        prefix = fixed_prefix(glob)
        if not prefix:
            continue
        try:
            base = within(root, root / prefix)
        except LeadsOut:
            continue
        if base.is_dir():
            folders.update(Path(d) for d, _dirs, _files in _walk(base))
        else:
            above = base.parent
            while above != root and not above.is_dir():
                above = above.parent
            folders.add(above)
    return {f for f in folders if f.is_dir()}


def _walk(base: Path) -> Iterable[tuple[str, list[str], list[str]]]:
    for directory, dirs, files in os.walk(base):  # links to folders are not walked
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        yield directory, dirs, files


class Unreadable(Exception):
    """The note exists but is not indexed now (too large, unreadable): its memories stay."""


def read_note(root: Path, path: Path) -> tuple[Path, str | None]:
    """(the name the note is read under, its text), the text None when the note no longer
    exists (its units are then forgotten). The name is `path`'s, or its target's when it is a
    link inside `root`. LeadsOut when it leads out of `root` (or round a loop), checked as
    the file is opened (`memls.files.open_within`); Unreadable when it cannot be read now."""
    try:
        name, fd = open_within(root, path)
    except LeadsOut:
        raise
    except (FileNotFoundError, NotADirectoryError):
        return path, None
    except OSError as exc:
        raise Unreadable(f"{path}: {exc}") from None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as handle:
        facts = os.fstat(handle.fileno())
        if not stat.S_ISREG(facts.st_mode):
            raise Unreadable(f"{path} is not a regular file")
        if facts.st_size > MAX_NOTE_BYTES:
            raise Unreadable(f"{path} is larger than {MAX_NOTE_BYTES} bytes")
        try:
            return name, handle.read()
        except OSError as exc:
            raise Unreadable(f"{path}: {exc}") from None
