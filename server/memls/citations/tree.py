"""Citations checked against the project folder as it is now (reads the disk and runs git).

A `Workspace` reads each cited file once, parses its symbols once, and asks git once for
renames, so checking many citations of one file costs one read. A citation whose file is gone
is followed to its new path: in a git repository by git's rename detection (since the commit
that was checked out when the citation was made) and, for files git does not track, by the
cited text in the untracked files; in a folder without git, by the cited text in the files
that appeared (the watcher's), or else the files near the old one.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable
from pathlib import Path

from memls.citations import git
from memls.citations.anchor import Anchor, Located
from memls.citations.files import FileText, read
from memls.citations.fingerprint import FileView
from memls.citations.locate import locate, locate_coarse, missing, short_diff
from memls.citations.renames import follow
from memls.citations.symbols import Symbol, supported, symbols

MAX_NEIGHBOURS = 200
"""Files looked at beside a vanished file, in a folder without git."""


class Workspace:
    def __init__(
        self,
        root: Path,
        *,
        use_git: bool = True,
        appeared: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        """`appeared`, when given, names the files that appeared since the citations were
        checked (the watcher's added files); by default git's untracked files, or (without
        git) the files in the vanished one's folder, its parent and the parent's subfolders."""
        self.root = root
        self.use_git = use_git
        self._appeared_given = appeared
        self._texts: dict[str, FileText | None] = {}
        self._symbols: dict[str, list[Symbol]] = {}
        self._renames: dict[str | None, dict[str, str]] = {}
        self._added: dict[str | None, list[str]] = {}
        self._head: str | None | bool = False

    def exists(self) -> bool:
        return self.root.is_dir()

    def head(self) -> str | None:
        if self._head is False:
            self._head = git.head(self.root) if self.use_git else None
        return self._head if isinstance(self._head, str) else None

    def text(self, rel: str) -> FileText | None:
        if rel not in self._texts:
            self._texts[rel] = read(self.root, rel)
        return self._texts[rel]

    def forget(self, rel: str) -> None:
        """Read `rel` again next time (it changed on disk)."""
        self._texts.pop(rel, None)
        self._symbols.pop(rel, None)

    def release(self) -> None:
        """Drop the texts read so far (a check goes file by file: memory stays flat)."""
        self._texts.clear()
        self._symbols.clear()

    def symbols(self, rel: str) -> list[Symbol]:
        if rel not in self._symbols:
            found = self.text(rel)
            view = found.view if found is not None else None
            text = "\n".join(view.lines) if view is not None and supported(rel) else ""
            self._symbols[rel] = symbols(rel, text) if text else []
        return self._symbols[rel]

    def check(self, anchor: Anchor, since: str | None = None) -> tuple[Located, str | None]:
        """Where `anchor` stands now, and a short diff when its text changed. `since` is the
        commit checked out when the citation was made (for git's rename detection)."""
        where = anchor.path
        found = self.text(where)
        if found is None:
            moved_to = self._follow(anchor, since)
            if moved_to is None:
                return missing(anchor), None
            where, found = moved_to
        if found.error is not None:
            raise OSError(found.error)
        if anchor.coarse or found.view is None:
            return locate_coarse(anchor, found.digest, path=where), None
        kind_symbols = self.symbols(where) if anchor.kind == "symbol" else None
        located = locate(anchor, found.view, path=where, symbols=kind_symbols)
        return located, short_diff(anchor, found.view, located)

    def _follow(self, anchor: Anchor, since: str | None) -> tuple[str, FileText] | None:
        if self.use_git:
            if since not in self._renames:
                self._renames[since] = git.renames(self.root, since)
            new = self._renames[since].get(anchor.path)
            if new is not None:
                found = self.text(new)
                if found is not None:
                    return new, found
        views: dict[str, FileView] = {}
        for rel in self._appeared(anchor.path, since):
            found = self.text(rel)
            if found is not None and found.view is not None:
                views[rel] = found.view
        new = follow(anchor, views)
        if new is None:
            return None
        found = self.text(new)
        return (new, found) if found is not None else None

    def _appeared(self, old: str, since: str | None) -> list[str]:
        if self._appeared_given is not None:
            if None not in self._added:
                self._added[None] = list(self._appeared_given())
            return self._added[None]
        if self.use_git and self.head() is not None:
            if since not in self._added:  # git judged the tracked ones (renames above)
                self._added[since] = git.untracked(self.root)
            return self._added[since]
        folder = posixpath.dirname(old)
        parent = posixpath.dirname(folder)
        folders = [folder, parent] if folder else [folder]
        folders += [f for f in self._subfolders(parent) if f != folder]
        out: list[str] = []
        for base in folders:
            for entry in self._entries(base):
                if entry.is_file(follow_symlinks=False):
                    out.append(posixpath.join(base, entry.name) if base else entry.name)
                if len(out) >= MAX_NEIGHBOURS:
                    return out
        return out

    def _entries(self, base: str) -> list[os.DirEntry[str]]:
        try:
            return sorted(os.scandir(self.root / base), key=lambda e: e.name)
        except OSError:
            return []

    def _subfolders(self, base: str) -> list[str]:
        return [
            posixpath.join(base, e.name) if base else e.name
            for e in self._entries(base)
            if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
        ]
