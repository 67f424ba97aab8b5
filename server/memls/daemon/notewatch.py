"""The owner's note watcher: every project a front names (an editor's workspace folder, an
agent's root, `--project` of `memls mcp`, the hooks and the CLI's `context`, `query` and
`check`) has its notes (every agent's instruction files, nested ones too, `.memls/`, decision
records: the table of `memls.notes.conventions`) indexed and followed by the process that owns
the store, so an agent with no editor open has them, and an editor and an agent on one folder
see the same notes, indexed once.

- The watched set is in the store (`watched_projects`): it survives a restart. At start each
  project is queued for a scan, in the background and one at a time (the daemon answers at
  once); a front that names a project moves it to the head of the queue and waits for it,
  within a bound (`memory/watch`'s `wait`); with `reread` (`memls check`) it waits for a
  reading that starts after it asked.
- A scan walks the project's folder once, pruned by what it ignores (`.gitignore`, `.git`,
  `node_modules`: `memls.notes.files`), finds the files the table names (with config.toml's
  `[notes]` globs), syncs each one (unchanged units stay, `Notes.sync_note`) with what it
  imports (`memls.daemon.noteread`) and forgets the units of notes that went while no owner
  ran. What of a note cannot be read as its agent meant (front matter, a glob, an import
  that leads out) is a warning in `memory/watch`'s `warnings`.
- Nothing outside the project's folder is read as its note (`notes.files`): a link that leads
  out (or round a loop) is not followed and is named in the log and in `memory/watch`'s
  `refused`, at each scan; every read checks again as it opens the file. A link inside the
  folder is read once, under the name of its target. A change to a link, or in a folder
  reached through one, makes its project scanned again.
- Watching is cheap: `notes.files.watch_folders` (the folders holding notes and those above
  them, no recursive watch of the tree), one watchfiles thread for every project; a folder
  that appears or goes, or a `.gitignore` that changes, makes its project scanned again.
- An editor's open buffer wins over the disk: a note synced with `open` is left to the editor
  until it is synced again without (the editor closed it: `fromDisk`). The editor does not
  say what a note is: the owner answers (`note` false for a file its table does not name).
- The memories agents keep by themselves outside the folder (Claude Code's auto memory of
  the project; the user-wide ones as `@user`) are followed beside (`daemon.agent_memory`):
  read with the project's notes, listed with them (`agentMemory`), watched in their own
  folders; an editor's buffer of one is synced like a note's, read inside its own folder.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import watchfiles
from pygls import uris

from memls import protocol
from memls.daemon.agent_memory import AgentMemoryWatcher
from memls.daemon.folders import follow
from memls.daemon.noteread import ProjectNotes
from memls.errors import InvalidInput, MemlsError
from memls.files import LeadsOut, within
from memls.notes import table as notes_table
from memls.notes.files import Unreadable, read_note, watch_folders
from memls.scope import project_key

log = logging.getLogger("memls.daemon.notewatch")

DEBOUNCE_MS = 200
"""Changes closer together than this are read as one batch (an editor's save writes a
temporary file and renames it)."""

Sync = Callable[[protocol.SyncNoteParams], protocol.SyncNoteResult]


def folder_of(project: str) -> Path:
    """The folder a watched project names; InvalidInput (field `project`) when it names none."""
    path = Path(project)
    if not path.is_absolute() or not path.is_dir():
        raise InvalidInput(
            f"{project} is not a folder: a watched project is the absolute path of a "
            "project's root folder",
            field="project",
        )
    return path


class NoteWatcher:
    def __init__(self, engine: Any, sync: Sync) -> None:
        self.engine = engine
        self._sync = sync
        settings = engine.settings
        self.table = notes_table(
            settings.note_globs, settings.instruction_globs, settings.record_globs
        )
        self._lock = threading.Condition()
        self._projects: dict[str, ProjectNotes] = {}
        self._queue: deque[tuple[str, str]] = deque()  # (project, "scan" | a file path)
        self._held: set[str] = set()  # note uris an editor holds open
        self._gap: set[str] = set()  # projects whose folders changed: read again once watched
        # a file read and synced, or an editor's sync: one at a time
        self._syncing = threading.Lock()
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._threads: list[threading.Thread] = []
        self.watching = threading.Event()
        """Set while the current folders are being watched (cleared when they change)."""
        self.agents = AgentMemoryWatcher(engine, sync, held=self._is_held, syncing=self._syncing)
        """The memories agents keep by themselves, outside the projects' folders."""

    def _state(self, project: str) -> ProjectNotes:
        return ProjectNotes(Path(project), self.table, self._lock, self._syncing)

    # ------------------------------------------------------------ lifecycle

    def start(self) -> NoteWatcher:
        for project, _via, _since in self.engine.watched_projects():
            if Path(project).is_dir():
                self._add(project, first=False)
        for name, target in (("memls-notes", self._work), ("memls-notes-watch", self._watch)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        self.agents.start()
        return self

    def stop(self) -> None:
        self.agents.stop()
        self._stop.set()
        self._restart.set()
        with self._lock:
            self._lock.notify_all()
        for thread in self._threads:
            thread.join(10)

    # ------------------------------------------------------------ what fronts ask

    def watch(
        self, project: str, via: str, wait: float, reread: bool = False
    ) -> protocol.WatchResult:
        """Watch the project (its first reading queued first) and answer once it has been
        read, within `wait`; `reread`: once it has been read again from now (a reading that
        started before this call does not count: a change it missed would be missed)."""
        folder_of(project)
        with self._lock:
            known = project in self._projects
        # a project already watched costs no write: a hook names its project on every prompt
        added = False if known else bool(self.engine.add_watched(project, via))
        state = self._add(project, first=True)
        read = self._reread(project, state) if reread else state.scanned
        started = time.monotonic()
        indexed = read.wait(wait) if wait > 0 else read.is_set()
        if indexed and state.fresh and wait > 0:
            # the first answer after a reading also waits (bounded) for its units' embedding
            # and contradiction check: a recall then shows a contested line with its other side
            state.fresh = False
            self.engine.flush(max(0.0, wait - (time.monotonic() - started)))
        return protocol.WatchResult(
            project=project,
            added=added,
            watching=True,
            indexed=indexed,
            notes=self.notes_of(project),
            refused=self.refused_of(project),
            warnings=self.warnings_of(project),
        )

    def unwatch(self, project: str) -> bool:
        removed = bool(self.engine.remove_watched(project))
        with self._lock:
            self._projects.pop(project, None)
        self.agents.drop(project)
        self._restart.set()
        return removed

    def notes_of(self, project: str) -> list[protocol.NoteFile]:
        with self._lock:
            state = self._projects.get(project)
            mine = sorted(state.notes.values(), key=lambda n: n.uri) if state else []
        return mine + self.agents.notes_of(project) if state else []

    def refused_of(self, project: str) -> list[protocol.RefusedNote]:
        with self._lock:
            state = self._projects.get(project)
            return sorted(state.refused.values(), key=lambda r: r.uri) if state else []

    def warnings_of(self, project: str) -> list[protocol.NoteWarning]:
        with self._lock:
            state = self._projects.get(project)
            if state is None:
                return []
            found = [w for listed in state.warnings.values() for w in listed]
            return sorted(found, key=lambda w: (w.uri, w.line, w.message))

    def editor_sync(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        """An editor's sync: from its open buffer (`open`: the file is held, the watcher leaves
        it alone) or from the disk (`fromDisk`: released). The owner says whether it is a note
        at all, and under which name (a link's target inside the folder): the editor relays
        its buffers and shows the answer. Never interleaved with the watcher's own read and
        sync of a file, so a disk read from before the buffer cannot land after it."""
        project = project_key(params.project)
        with self._lock:
            state = self._projects.get(project)
        if state is None:
            state = self._state(project)
        with self._syncing:  # an agent's own memory file of the project, outside its folder
            mine = self.agents.editor_sync(project, params)
            if mine is not None:
                self._hold(mine.uri, params.open)
                return mine
        path = Path(uris.to_fs_path(params.uri) or "")
        try:
            name = within(state.root, path) if state.root.is_dir() else path
        except (LeadsOut, OSError):
            return _no_note(project, params.uri)
        uri = uris.from_fs_path(str(name)) or params.uri
        if state.relative(name) is None or not state.is_note(name):
            return _no_note(project, uri)
        with self._syncing:
            text = params.text
            if params.from_disk:
                try:
                    _name, text = read_note(state.root, name)
                except (LeadsOut, Unreadable) as exc:
                    log.warning("not indexing %s", exc)
                    return _no_note(project, uri)
            result = state.sync_text(self._sync, uri, text, open_buffer=params.open)
            self._hold(uri, params.open)
        return result

    def _hold(self, uri: str, held: bool) -> None:
        with self._lock:
            if held:
                self._held.add(uri)
            else:
                self._held.discard(uri)

    def scan_once(
        self, project: str
    ) -> tuple[list[protocol.NoteFile], list[protocol.RefusedNote], list[protocol.NoteWarning]]:
        """Index a project's notes now, on this thread (a process that does not watch)."""
        folder_of(project)
        with self._lock:
            self._projects[project] = self._state(project)
        self._scan(project)
        return self.notes_of(project), self.refused_of(project), self.warnings_of(project)

    # ------------------------------------------------------------ the queue

    def _add(self, project: str, *, first: bool) -> ProjectNotes:
        with self._lock:
            state = self._projects.get(project)
            if state is None:
                state = self._projects[project] = self._state(project)
                self._queue.append((project, "scan"))
                self.agents.follow(project)
            if first and not state.scanned.is_set():
                try:
                    self._queue.remove((project, "scan"))
                except ValueError:
                    pass  # being scanned now
                else:
                    self._queue.appendleft((project, "scan"))
            self._lock.notify_all()
            return state

    def _reread(self, project: str, state: ProjectNotes) -> threading.Event:
        """An event set when a reading of the project that starts after now is done: its scan
        is queued first (one already queued, not started, serves)."""
        done = threading.Event()
        with self._lock:
            state.waiting.append(done)
            try:
                self._queue.remove((project, "scan"))
            except ValueError:
                pass  # none queued, or being scanned now (it read before this call)
            self._queue.appendleft((project, "scan"))
            self._lock.notify_all()
        return done

    def _work(self) -> None:
        while not self._stop.is_set():
            waiting: list[threading.Event] = []
            with self._lock:
                while not self._queue and not self._stop.is_set():
                    self._lock.wait()
                if self._stop.is_set():
                    return
                project, what = self._queue.popleft()
                started = self._projects.get(project)
                if what == "scan" and started is not None:  # who waits for a reading from now
                    waiting, started.waiting = started.waiting, []
            try:
                if what == "scan":
                    self._scan(project)
                else:
                    self._file(project, Path(what))
            except MemlsError as error:  # the project's folder went, a bad note
                log.warning("notes of %s not indexed: %s", project, error)
            except Exception:  # one project's failure must not stop the watcher
                log.exception("notes of %s not indexed", project)
            finally:
                state = self._projects.get(project)
                if what == "scan" and state is not None:
                    state.scanned.set()
                for done in waiting:
                    done.set()

    def _scan(self, project: str) -> None:
        state = self._projects.get(project)
        if state is None:
            return
        changed = state.scan(self._sync, lambda: self.engine.note_uris(project), self._is_held)
        if self.agents.scan(project):  # its agents' own memories, read with its notes
            state.fresh = True
        with self._lock:
            if changed and self._threads:
                self._gap.add(project)
        if changed:
            self._restart.set()

    def _rescan(self, project: str) -> None:
        with self._lock:
            if (project, "scan") not in self._queue:
                self._queue.append((project, "scan"))
            self._lock.notify_all()

    def _is_held(self, uri: str) -> bool:
        with self._lock:
            return uri in self._held

    def _file(self, project: str, path: Path) -> None:
        """A changed note read again (and what it imports); a scan when it is no longer the
        note it was (it became a link), or when an import went (its file is forgotten)."""
        state = self._projects.get(project)
        if state is None:
            return
        if None in state.read(self._sync, path, self._is_held):
            self._rescan(project)
            return
        for gone in state.orphans():
            uri = uris.from_fs_path(str(gone)) or ""
            with self._syncing:
                if not self._is_held(uri):
                    state.sync_text(self._sync, uri, None)
        folders = state.folders
        with self._lock:
            reading = [Path(uris.to_fs_path(u) or "") for u in state.notes]
        wanted = watch_folders(state.root, self.table, reading) | state.linked_folders
        if wanted != folders:
            with self._lock:
                state.folders = wanted
                self._gap.add(project)
            self._restart.set()

    # ------------------------------------------------------------ the watch

    def _watch(self) -> None:
        def folders() -> list[str]:
            with self._lock:
                return sorted({str(f) for s in self._projects.values() for f in s.folders})

        follow(
            folders,
            self._changed,
            stop=self._stop,
            restart=self._restart,
            watching=self.watching,
            debounce_ms=DEBOUNCE_MS,
            step_ms=50,
            what="notes",
            settled=self._after_gap,
        )

    def _after_gap(self) -> None:
        """What changed while the watch was being set up again (new folders) is not heard:
        those projects are read once more, now that their folders are watched."""
        with self._lock:
            gap, self._gap = self._gap, set()
            for project in sorted(gap):
                if project in self._projects and (project, "scan") not in self._queue:
                    self._queue.append((project, "scan"))
            self._lock.notify_all()

    def _changed(self, changes: Iterable[tuple[watchfiles.Change, str]]) -> None:
        with self._lock:
            roots = sorted(self._projects, key=len, reverse=True)
        tasks: list[tuple[str, str]] = []
        for change, raw in changes:
            path = Path(raw)
            project = next((r for r in roots if Path(r) in path.parents), None)
            state = self._projects.get(project) if project is not None else None
            if project is None or state is None:
                continue
            with self._lock:
                structural = (
                    path.is_dir()
                    or (change == watchfiles.Change.deleted and path in state.folders)
                    or path.is_symlink()
                    or path in state.links
                    or path.parent in state.linked_folders
                    or path.name == ".gitignore"
                    or self._shadowing(path)
                )
            if structural:
                tasks.append((project, "scan"))  # a folder, a link or what is read changed
            elif state.is_note(path):
                tasks.append((project, str(path)))
        with self._lock:
            for task in tasks:
                if task not in self._queue:
                    self._queue.append(task)
            self._lock.notify_all()

    def _shadowing(self, path: Path) -> bool:
        """Can a change of this file change which file of its folder is read (an
        `AGENTS.override.md`, or an `AGENTS.md` beside one)?"""
        winners = {Path(c.path).name for c in self.table.conventions if c.shadows}
        if path.name in winners:
            return True
        losers = {name for c in self.table.conventions for name in c.shadows}
        return path.name in losers and any((path.parent / w).exists() for w in winners)


def _no_note(project: str, uri: str) -> protocol.SyncNoteResult:
    return protocol.SyncNoteResult(
        project=project, uri=uri, added=[], removed=[], moved=[], unchanged=0, note=False
    )
