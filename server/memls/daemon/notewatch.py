"""The owner's note watcher: every project a front names (an editor's workspace folder, an
agent's root, `--project` of `memls mcp`, the hooks and the CLI's `context` and `query`) has
its notes (AGENTS.md, CLAUDE.md, `.memls/`, decision records, rules files) indexed and
followed by the process that owns the store, so an agent with no editor open has them, and an
editor and an agent on one folder see the same notes, indexed once.

- The watched set is in the store (`watched_projects`): it survives a restart. At start each
  project is queued for a scan, in the background and one at a time (the daemon answers at
  once); a front that names a project moves it to the head of the queue and waits for it,
  within a bound (`memory/watch`'s `wait`).
- A scan finds the project's note files by glob (`[notes] globs`), syncs each one (unchanged
  units stay, `Notes.sync_note`) and forgets the units of notes that went while no owner ran.
- Nothing outside the project's folder is read as its note (`notes.files`): a link that leads
  out (or round a loop) is not followed and is named in the log and in `memory/watch`'s
  `refused`, at each scan; every read checks again as it opens the file. A link inside the
  folder is read once, under the name of its target. A change to a link, or in a folder
  reached through one, makes its project scanned again.
- Watching is cheap: `notes.files.watch_folders` (no recursive watch of the tree), one
  watchfiles thread for every project; a folder that appears or goes makes its project
  scanned again.
- An editor's open buffer wins over the disk: a note synced with `open` is left to the editor
  until it is synced again without (the editor closed it).
- The memories agents keep by themselves outside the folder (Claude Code's auto memory of
  the project; the user-wide ones as `@user`) are followed beside (`daemon.agent_memory`):
  read with the project's notes, listed with them, watched in their own folders.
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
from memls.errors import InvalidInput, MemlsError
from memls.files import LeadsOut
from memls.notes import default_type, matches, note_kind
from memls.notes.files import Unreadable, find, read_note, watch_folders

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


class _Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.scanned = threading.Event()
        self.notes: dict[str, protocol.NoteFile] = {}
        self.folders: set[Path] = set()
        self.links: set[Path] = set()  # links a glob names (or could find notes in)
        self.linked_folders: set[Path] = set()  # folders reached through a link
        # notes no glob names, read as the target of a link that one names -> the link's path
        # relative to the project (which says their kind)
        self.targets: dict[Path, str] = {}
        self.refused: dict[str, protocol.RefusedNote] = {}
        self.fresh = False  # a reading stored units not yet waited for (embedded, checked)


class NoteWatcher:
    def __init__(self, engine: Any, sync: Sync) -> None:
        self.engine = engine
        self._sync = sync
        settings = engine.settings
        self.globs: tuple[str, ...] = tuple(settings.note_globs)
        self.kinds = (tuple(settings.instruction_globs), tuple(settings.record_globs))
        self._lock = threading.Condition()
        self._projects: dict[str, _Project] = {}
        self._queue: deque[tuple[str, str]] = deque()  # (project, "scan" | a file path)
        self._held: set[str] = set()  # note uris an editor holds open
        self._gap: set[str] = set()  # projects whose folders changed: read again once watched
        self._syncing = (
            threading.Lock()
        )  # a file read and synced, or an editor's sync: one at a time
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._threads: list[threading.Thread] = []
        self.watching = threading.Event()
        """Set while the current folders are being watched (cleared when they change)."""
        self.agents = AgentMemoryWatcher(engine, sync, held=self._is_held, syncing=self._syncing)
        """The memories agents keep by themselves, outside the projects' folders."""

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

    def watch(self, project: str, via: str, wait: float) -> protocol.WatchResult:
        folder_of(project)
        with self._lock:
            known = project in self._projects
        # a project already watched costs no write: a hook names its project on every prompt
        added = False if known else bool(self.engine.add_watched(project, via))
        state = self._add(project, first=True)
        started = time.monotonic()
        indexed = state.scanned.wait(wait) if wait > 0 else state.scanned.is_set()
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

    def editor_sync(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        """An editor's sync: from its open buffer (`open`: the file is held, the watcher leaves
        it alone) or from the disk (released). Never interleaved with the watcher's own read
        and sync of a file, so a disk read from before the buffer cannot land after it."""
        with self._syncing:
            result = self._sync(params)
            with self._lock:
                if params.open:
                    self._held.add(result.uri)
                else:
                    self._held.discard(result.uri)
        return result

    def scan_once(self, project: str) -> tuple[list[protocol.NoteFile], list[protocol.RefusedNote]]:
        """Index a project's notes now, on this thread (a process that does not watch)."""
        state = _Project(folder_of(project))
        with self._lock:
            self._projects[project] = state
        self._scan(project)
        return self.notes_of(project), self.refused_of(project)

    # ------------------------------------------------------------ the queue

    def _add(self, project: str, *, first: bool) -> _Project:
        with self._lock:
            state = self._projects.get(project)
            if state is None:
                state = self._projects[project] = _Project(Path(project))
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

    def _work(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                while not self._queue and not self._stop.is_set():
                    self._lock.wait()
                if self._stop.is_set():
                    return
                project, what = self._queue.popleft()
            try:
                if what == "scan":
                    self._scan(project)
                else:
                    self._file(project, Path(what), self._kind_name(project, Path(what)))
            except MemlsError as error:  # the project's folder went, a bad note
                log.warning("notes of %s not indexed: %s", project, error)
            except Exception:  # one project's failure must not stop the watcher
                log.exception("notes of %s not indexed", project)
            finally:
                state = self._projects.get(project)
                if what == "scan" and state is not None:
                    state.scanned.set()

    def _scan(self, project: str) -> None:
        state = self._projects.get(project)
        if state is None or not state.root.is_dir():
            return
        found = find(state.root, self.globs)
        self._refuse(project, state, found.refused)
        with self._lock:
            linked_before = {uris.from_fs_path(str(path)) for path in state.targets}
            state.links, state.linked_folders = found.links, found.linked_folders
            state.targets = {
                path: relative
                for path, relative in found.notes.items()
                if relative != path.relative_to(state.root).as_posix()
            }
        seen = {self._file(project, path, relative) for path, relative in found.notes.items()}
        for uri in self.engine.note_uris(project):
            if uri not in seen and (uri in linked_before or self._mine(project, uri)):
                with self._syncing:
                    if not self._is_held(uri):
                        self._sync_text(project, uri, None)
        if self.agents.scan(project):  # its agents' own memories, read with its notes
            state.fresh = True
        folders = watch_folders(state.root, self.globs, found.notes) | found.linked_folders
        with self._lock:
            changed = folders != state.folders
            state.folders = folders
            if changed and self._threads:
                self._gap.add(project)
        if changed:
            self._restart.set()

    def _refuse(self, project: str, state: _Project, refused: list[LeadsOut]) -> None:
        """Links not followed: each named in the log at every scan, and kept for
        `memory/watch`'s answer (an editor shows them on the link)."""
        for link in refused:
            log.warning("not read as a note of %s: %s", project, link)
        with self._lock:
            state.refused = {
                uri: protocol.RefusedNote(uri=uri, target=link.target or "", message=str(link))
                for link in refused
                if (uri := uris.from_fs_path(str(link.path)) or "")
            }

    def _rescan(self, project: str) -> None:
        with self._lock:
            if (project, "scan") not in self._queue:
                self._queue.append((project, "scan"))
            self._lock.notify_all()

    def _kind_name(self, project: str, path: Path) -> str | None:
        with self._lock:
            state = self._projects.get(project)
            return state.targets.get(path) if state is not None else None

    def _mine(self, project: str, uri: str) -> bool:
        path = uris.to_fs_path(uri)
        if not path:
            return False
        try:
            return matches(Path(path).relative_to(project).as_posix(), self.globs)
        except ValueError:
            return False

    def _is_held(self, uri: str) -> bool:
        with self._lock:
            return uri in self._held

    def _file(self, project: str, path: Path, kind_name: str | None = None) -> str | None:
        """Read one note (found by a scan, or changed) and sync it. None when `path` is not
        the note it was (it became a link, in or out of the folder): nothing is read, and
        a scan, queued, sorts out what it is now."""
        uri = uris.from_fs_path(str(path)) or ""
        state = self._projects.get(project)
        if state is None:
            return None
        with self._syncing:
            if self._is_held(uri):
                return uri
            try:
                name, text = read_note(state.root, path)
            except LeadsOut:
                self._rescan(project)
                return None
            except Unreadable as exc:
                log.warning("not indexing %s", exc)  # keep what was indexed before
                return uri
            if name != path:
                self._rescan(project)
                return None
            self._sync_text(project, uri, text, kind_name)
        return uri

    def _sync_text(
        self, project: str, uri: str, text: str | None, kind_name: str | None = None
    ) -> None:
        """Sync a note; its kind and default type by its path in the project, or by
        `kind_name` (the path of the link it was found by)."""
        relative = kind_name or Path(uris.to_fs_path(uri) or "").relative_to(project).as_posix()
        result = self._sync(
            protocol.SyncNoteParams(
                uri=uri,
                text=text,
                project=project,
                default_type=default_type(relative),  # type: ignore[arg-type]
            )
        )
        with self._lock:
            state = self._projects.get(project)
            if state is None:
                return
            if result.added:
                state.fresh = True
            if text is None:
                state.notes.pop(uri, None)
            else:
                kind = note_kind(relative, *self.kinds)
                state.notes[uri] = protocol.NoteFile(uri=uri, kind=kind, secrets=result.secrets)

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
            for change, raw in changes:
                path = Path(raw)
                project = next((r for r in roots if Path(r) in path.parents), None)
                if project is None:
                    continue
                state = self._projects[project]
                relative = path.relative_to(project).as_posix()
                if (
                    path.is_dir()
                    or (change == watchfiles.Change.deleted and path in state.folders)
                    or path.is_symlink()
                    or path in state.links
                    or path.parent in state.linked_folders
                ):
                    task = (project, "scan")  # a folder or a link came, went or changed
                elif matches(relative, self.globs) or path in state.targets:
                    task = (project, str(path))
                else:
                    continue
                if task not in self._queue:
                    self._queue.append(task)
            self._lock.notify_all()
