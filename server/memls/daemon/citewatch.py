"""The owner's watcher of cited code: it watches only the folders that hold cited files (not
a walk of the tree), re-checks a file's citations when it is saved or changes on disk, and at
start catches up on what changed while no owner ran (a `git pull`, a branch switch).

It lives with the owner, not with one front: an agent with no editor open gets the truth too.
The engine records the states, audits moves and announces `memory/changed` (op "citations").
The watch set follows the store: any `memory/changed` makes the watcher read it again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import watchfiles

from memls.daemon.folders import follow
from memls.errors import MemlsError

log = logging.getLogger("memls.daemon.citewatch")

DEBOUNCE_MS = 50
"""Changes closer together than this are checked as one batch (an editor's save writes a
temporary file and renames it)."""


class CitationWatcher:
    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._thread: threading.Thread | None = None
        self._cited: dict[str, set[str]] = {}
        self.caught_up = threading.Event()
        """Set once the start-up catch-up has run."""
        self.watching = threading.Event()
        """Set while the current watch set is being watched (cleared when it is read again)."""

    def start(self) -> threading.Thread:
        self.engine.listeners.append(self._heard)
        thread = self._thread = threading.Thread(
            target=self._run, name="memls-citations", daemon=True
        )
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
        self._restart.set()
        try:
            self.engine.listeners.remove(self._heard)
        except ValueError:
            pass
        if self._thread is not None:
            self._thread.join(10)

    def _heard(self, method: str, payload: Any) -> None:
        if method == "memory/changed" and getattr(payload, "op", "") != "citations":
            self._restart.set()  # new or forgotten citations: watch what the store cites now
        elif method == "memory/changed":
            project = getattr(payload, "project", "")
            if project not in self._cited:
                self._restart.set()

    # ------------------------------------------------------------ the loop

    def _run(self) -> None:
        try:
            self.catch_up()
        finally:
            self.caught_up.set()
        follow(
            self._folders,
            self._changed,
            stop=self._stop,
            restart=self._restart,
            watching=self.watching,
            debounce_ms=DEBOUNCE_MS,
            step_ms=20,
            what="cited files",
        )

    def catch_up(self) -> None:
        """Check every project's citations once (what changed while no owner ran)."""
        for project in self._read_cited():
            self._recheck(project, None)

    def _read_cited(self) -> list[str]:
        try:
            cited = self.engine.cited()
        except MemlsError as error:
            log.warning("cannot read the cited files: %s", error)
            cited = {}
        self._cited = {project: set(paths) for project, paths in cited.items()}
        return list(self._cited)

    def _folders(self) -> list[str]:
        self._read_cited()
        folders: set[str] = set()
        for project, paths in self._cited.items():
            root = Path(project)
            for rel in paths:
                folder = (root / rel).parent
                while not folder.is_dir() and folder != root and root in folder.parents:
                    folder = folder.parent  # the file's folder went: watch the one above
                if folder.is_dir():
                    folders.add(str(folder))
        return sorted(folders)

    def _changed(self, changes: Iterable[tuple[watchfiles.Change, str]]) -> None:
        by_project: dict[str, set[str]] = {}
        appeared = False
        for change, raw in changes:
            path = Path(raw)
            for project, paths in self._cited.items():
                root = Path(project)
                if root not in path.parents:
                    continue
                rel = path.relative_to(root).as_posix()
                if rel in paths:
                    by_project.setdefault(project, set()).add(rel)
                elif change != watchfiles.Change.modified:
                    appeared = True  # a file came or went beside cited ones: a rename?
                    by_project.setdefault(project, set())
        for project, rels in by_project.items():
            if appeared:
                rels |= {rel for rel in self._cited[project] if not (Path(project) / rel).exists()}
            if rels:
                self._recheck(project, sorted(rels))

    def _recheck(self, project: str, paths: list[str] | None) -> None:
        try:
            self.engine.recheck_citations(project, paths)
        except MemlsError as error:  # the project folder is gone: keep the states
            log.warning("citations of %s not checked: %s", project, error)
        except Exception:  # one project's failure must not stop the watcher
            log.exception("citations of %s not checked", project)
