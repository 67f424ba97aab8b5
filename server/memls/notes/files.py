"""A project's note files on disk: found by the table of the agents' conventions, read, their
imports followed, and the folders worth watching.

Finding is one walk of the project's folder, pruned as git prunes it: a folder that
`.gitignore` (or `.git/info/exclude`) ignores, or `.git`, `node_modules` and the like
(`memls.notes.ignore`), is not entered, so no note is read from it. A file a `.gitignore`
names in a folder that is not ignored is read: an agent's personal files are meant to be
ignored (`CLAUDE.local.md`, `AGENTS.override.md`) and their agents read them. Watching is cheap on
purpose: not a recursive watch of the whole tree (which would put an inotify watch on every
folder), but the project folder, each folder that holds a note and the folders above it up to
the project's, and the folders the table's root conventions name (`.claude/rules`,
`docs/adr`, with their subfolders), or the nearest existing folder above one, so that its
creation is seen. A note in a new folder below a folder not watched is found at the next walk
(a folder created or removed in a watched folder walks the project again).

Nothing outside the project's folder is read as its note. A link (to a file or a folder)
whose target is outside the folder, or that goes round a loop, is not followed: `find`
reports it (`Found.refused`) and `read_note` refuses it, checking again as it opens the file
(`memls.files.open_within`), so a link swapped between the two does not lead out either. A
link that stays inside (`CLAUDE.md` -> `AGENTS.md`) is followed, and the note is read once,
under the name it leads to. The same holds for Claude Code's `@path` imports (`imported`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memls.files import LeadsOut, open_within, within
from memls.notes.conventions import Match, Table
from memls.notes.globs import below
from memls.notes.ignore import SKIP_DIRS, Ignores
from memls.notes.imports import imports

MAX_NOTE_BYTES = 1024 * 1024
WILDCARDS = frozenset("*?[")


@dataclass
class Found:
    """What a walk of a project folder found."""

    #: each note, by the name it is read under (a link's target), -> what the table says it
    #: is (by its own path when the table names it, else by the link's)
    notes: dict[Path, Match] = field(default_factory=dict)
    #: links not followed: they lead out of the folder or round a loop
    refused: list[LeadsOut] = field(default_factory=list)
    #: the links that could be notes or hold notes, followed or not, by their own path
    links: set[Path] = field(default_factory=set)
    #: folders reached through a link to a folder inside the project
    linked_folders: set[Path] = field(default_factory=set)
    #: notes not read because another file of their folder wins (Codex reads
    #: `AGENTS.override.md` instead of `AGENTS.md`): the one not read -> the one read
    shadowed: dict[Path, Path] = field(default_factory=dict)
    #: how many folders the walk read (for the cost figures)
    walked: int = 0


def find(root: Path, table: Table, ignores: Ignores | None = None) -> Found:
    """The notes under a folder, by the table on the path relative to it (see the module doc
    for ignores and links). Folders are read in name order, each folder's files before its
    subfolders."""
    ignores = ignores if ignores is not None else Ignores(root)
    anchored = table.root_globs()
    found = Found()
    real_root = os.path.realpath(root)
    visited: set[str] = set()
    # (the folder relative to the root as spelled, "" for it; its real path; reached by a link)
    stack: list[tuple[str, str, bool]] = [("", real_root, False)]
    while stack:
        here, real, linked = stack.pop()
        if real in visited:  # a second link to a folder, or a link to a folder above it
            continue
        visited.add(real)
        try:
            entries = sorted(os.scandir(real), key=lambda e: e.name)
        except OSError:
            continue
        found.walked += 1
        ignores.enter(here, real)
        if linked:
            found.linked_folders.add(within(root, Path(real)))
        subfolders: list[tuple[str, str, bool]] = []
        for entry in entries:
            relative = f"{here}/{entry.name}" if here else entry.name
            is_link = entry.is_symlink()
            try:
                is_folder = entry.is_dir()  # a link's target's
            except OSError:  # a loop of links: refused below, when a convention names it
                is_folder = False
            if is_folder and ignores.ignored(relative, folder=True):
                continue  # an ignored file in a folder that is not is read: CLAUDE.local.md
            if is_folder and not is_link:
                subfolders.append((relative, os.path.join(real, entry.name), linked))
                continue
            named = None if is_folder else table.match(relative)
            if named is None and not (is_folder and below(relative, anchored)):
                continue
            path = root / relative  # Paths only for what may be a note (pathlib is slow)
            if is_link:
                found.links.add(path)
            try:
                name = within(root, path)
            except LeadsOut as refused:
                found.refused.append(refused)
                continue
            if is_folder:
                subfolders.append((relative, os.path.realpath(path), True))
            elif os.path.isfile(name) and named is not None:  # a link to nothing is no note
                own = table.match(name.relative_to(root).as_posix())
                if own is not None:
                    found.notes[name] = own
                else:
                    found.notes.setdefault(name, named)
        stack.extend(reversed(subfolders))
    _shadow(found)
    return found


def _shadow(found: Found) -> None:
    """A file that wins over others of its folder (and is not empty: an agent skips an empty
    one) leaves them unread."""
    for path, named in list(found.notes.items()):
        for name in named.convention.shadows:
            other = path.parent / name
            if other in found.notes and other != path:
                try:
                    empty = path.stat().st_size == 0
                except OSError:
                    continue
                if not empty:
                    del found.notes[other]
                    found.shadowed[other] = path


def watch_folders(root: Path, table: Table, notes: Iterable[Path]) -> set[Path]:
    """The folders to watch (not recursively) so that every note, and every new note the
    table names at a fixed place, is seen: see the module doc. A prefix that leads out of the
    project is not watched (nor read)."""
    folders = {root}
    for path in notes:
        above = path.parent
        while above != root and root in above.parents:
            folders.add(above)
            above = above.parent
    for prefix in table.prefixes():
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


def imported(
    root: Path, note: Path, text: str, ignores: Ignores
) -> tuple[list[Path], list[tuple[int, str]]]:
    """The files a note imports (Claude Code's `@path`: relative to the note, `~/` the home
    folder) that are inside the project and not ignored, by their names there, and the
    warnings (0-based line, message) for those that are not read. An import of a file that
    does not exist is nothing, as for Claude Code."""
    out: list[Path] = []
    warnings: list[tuple[int, str]] = []
    for line, raw in imports(text):
        if raw.startswith("~"):
            warnings.append((line, f"@{raw} is outside the project's folder: not read"))
            continue
        candidate = Path(raw) if raw.startswith("/") else note.parent / raw
        try:
            name = within(root, candidate)
        except LeadsOut as exc:
            warnings.append((line, f"@{raw}: {exc}: not read"))
            continue
        except OSError:
            continue
        if not name.is_file():
            continue
        relative = name.relative_to(root).as_posix()
        if ignores.outside_of(relative):
            warnings.append((line, f"@{raw} is in an ignored folder: not read"))
            continue
        if name not in out:
            out.append(name)
    return out, warnings


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
