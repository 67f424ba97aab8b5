"""The owner's follower of the memories agents keep by themselves, outside the project's
folder (`memls.notes.agent_places` says where, `memls.notes.agent_memory` how each is read):
Claude Code's auto memory of every watched project, synced into that project, and the
user-wide memories of the Codex CLI and the Gemini CLI, synced into `@user`.

- The note watcher (`memls.daemon.notewatch`) tells it which projects are watched (`follow`,
  `drop`) and reads a project's agent memory with its notes (`scan`, on the note watcher's
  thread: a front that waits for a project's notes has these too). `@user` is read when it
  starts.
- Only the memory folders are watched, not recursively, with watchfiles: each folder a place
  names, or the nearest existing folder above it until it is created; a folder that comes or
  goes makes its project read again.
- Each file is read inside its memory folder (`notes.files.read_note`: a link that leads out
  is refused), and synced with its origin; a file that went is forgotten (`source_removed`).
  An editor's open buffer wins over the disk, as for notes.
- `[notes] agent_memories = false` (or `$MEMLS_AGENT_MEMORIES=0`): nothing is read, and what
  was read before is forgotten at the next reading of its project. memls never writes into
  these files.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import watchfiles
from pygls import uris

from memls import protocol
from memls.daemon.folders import follow
from memls.errors import MemlsError
from memls.files import LeadsOut
from memls.notes.agent_places import Place, claude_memory, user_places
from memls.notes.files import Unreadable, read_note
from memls.scope import USER_PROJECT

log = logging.getLogger("memls.daemon.agent_memory")

DEBOUNCE_MS = 200
Sync = Callable[[protocol.SyncNoteParams], protocol.SyncNoteResult]


class AgentMemoryWatcher:
    def __init__(
        self,
        engine: Any,
        sync: Sync,
        *,
        held: Callable[[str], bool],
        syncing: threading.Lock,
        home: Path | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.engine = engine
        self._sync = sync
        self._held = held  # an editor holds the uri open: its buffer wins
        self._syncing = syncing  # one read and sync at a time, the note watcher's too
        self.enabled = bool(getattr(engine.settings, "agent_memories", True))
        self.home = home if home is not None else Path.home()
        self.environ = os.environ if environ is None else environ
        self._lock = threading.Condition()
        self._places: dict[str, list[Place]] = {}  # followed project -> its places
        self._notes: dict[str, dict[str, protocol.NoteFile]] = {}
        self._folders: set[Path] = set()
        self._per: dict[str, set[Path]] = {}  # project -> the folders watched for it
        self._queue: deque[tuple[str, str]] = deque()  # (project, "scan" | a file path)
        self._gap: set[str] = set()
        self._stop = threading.Event()
        self._restart = threading.Event()
        self._threads: list[threading.Thread] = []
        self.watching = threading.Event()
        """Set while the current folders are watched (cleared when they change)."""

    # ------------------------------------------------------------ lifecycle

    def start(self) -> AgentMemoryWatcher:
        self.follow(USER_PROJECT)
        with self._lock:
            self._queue.append((USER_PROJECT, "scan"))  # a project's: with its notes (`scan`)
        for name, target in (("memls-agents", self._work), ("memls-agents-watch", self._watch)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stop.set()
        self._restart.set()
        with self._lock:
            self._lock.notify_all()
        for thread in self._threads:
            thread.join(10)

    # ------------------------------------------------------------ what the note watcher asks

    def follow(self, project: str) -> None:
        """Follow a project's agent memory from now on (the note watcher reads it with the
        project's notes: `scan`)."""
        with self._lock:
            self._places.setdefault(project, [])

    def drop(self, project: str) -> None:
        """Stop following a project (its memories stay, as its notes do)."""
        with self._lock:
            self._places.pop(project, None)
            self._notes.pop(project, None)
        self._refolder()

    def notes_of(self, project: str) -> list[protocol.NoteFile]:
        with self._lock:
            return sorted(self._notes.get(project, {}).values(), key=lambda n: n.uri)

    def places(self, project: str) -> list[Place]:
        """Where the project's agent memories are now ([] when reading them is off)."""
        if not self.enabled:
            return []
        if project == USER_PROJECT:
            return user_places(self.home, self.environ)
        return [claude_memory(Path(project), self.home, self.environ)]

    def scan(self, project: str) -> bool:
        """Read the project's agent memories now, on this thread: each file synced, those
        that went (or were read from another place before) forgotten. True when units were
        added (a front waiting for the project waits for their embedding too)."""
        places = self.places(project)
        with self._lock:
            if project in self._places or not self._threads:
                self._places[project] = places
        self._refolder()
        added, seen = False, set()
        for place in places:
            for path in place.files():
                uri, new = self._file(project, place, path)
                added = added or new
                if uri is not None:
                    seen.add(uri)
        for uri in self.engine.agent_note_uris(project):
            if uri not in seen:
                with self._syncing:
                    if not self._held(uri):
                        self._put(project, uri, None, None)
        return added

    # ------------------------------------------------------------ reading

    def _file(self, project: str, place: Place, path: Path) -> tuple[str | None, bool]:
        """Read one memory file inside its folder and sync it: (its uri, units added). The
        uri is None when it is not read (a link that leads out of the folder, or to a file
        that is no memory of the place)."""
        uri = uris.from_fs_path(str(path)) or ""
        with self._syncing:
            if self._held(uri):
                return uri, False
            try:
                name, text = read_note(place.folder, path)
            except LeadsOut as refused:
                log.warning("not read as %s: %s", place.origin, refused)
                return None, False
            except Unreadable as exc:
                log.warning("not indexing %s", exc)  # keep what was indexed before
                return uri, False
            if name != path:  # a link inside the folder: read once, under its target's name
                return None, False
            return uri, self._put(project, uri, text, place.origin)

    def _put(
        self, project: str, uri: str, text: str | None, origin: Any, *, open_buffer: bool = False
    ) -> bool:
        return bool(self._sync_put(project, uri, text, origin, open_buffer).added)

    def _sync_put(
        self, project: str, uri: str, text: str | None, origin: Any, open_buffer: bool
    ) -> protocol.SyncNoteResult:
        listed_now = False
        if text is not None:
            # listed before its units are announced: a front that hears of them and asks
            # `memory/watch` at once finds the file (its secrets follow the sync)
            with self._lock:
                notes = self._notes.setdefault(project, {})
                if uri not in notes:
                    notes[uri] = protocol.NoteFile(
                        uri=uri,
                        kind="instructions",
                        origin=protocol.ORIGIN_NAMES.get(origin, ""),
                        agent_memory=origin,
                    )
                    listed_now = True
        try:
            result = self._sync(
                protocol.SyncNoteParams(
                    uri=uri, text=text, project=project, agent_memory=origin, open=open_buffer
                )
            )
        except BaseException:
            if listed_now:
                with self._lock:
                    self._notes.get(project, {}).pop(uri, None)
            raise
        with self._lock:
            notes = self._notes.setdefault(project, {})
            if text is None:
                notes.pop(uri, None)
            else:
                notes[uri] = protocol.NoteFile(
                    uri=uri,
                    kind="instructions",
                    secrets=result.secrets,
                    origin=result.origin,
                    agent_memory=origin,
                )
        return result

    def editor_sync(
        self, project: str, params: protocol.SyncNoteParams
    ) -> protocol.SyncNoteResult | None:
        """An editor's buffer of one of the project's agent memory files, synced with its
        origin (`fromDisk`: read inside its own folder); None when it is no such file. The
        caller holds `syncing`."""
        path = Path(uris.to_fs_path(params.uri) or "")
        with self._lock:
            places = list(self._places.get(project, ()))
        place = next((p for p in places if p.holds(path)), None)
        if place is None:
            return None
        text = params.text
        if params.from_disk:
            try:
                name, text = read_note(place.folder, path)
            except (LeadsOut, Unreadable) as exc:
                log.warning("not indexing %s", exc)
                return None
            if name != path:  # a link inside the folder: read under its target's name
                return None
        return self._sync_put(project, params.uri, text, place.origin, params.open)

    # ------------------------------------------------------------ the queue and the watch

    def _refolder(self) -> None:
        """Watch the folders the places name now; the projects whose folders changed are
        read again once the new watch is in place (`_after_gap`)."""
        with self._lock:
            per = {
                project: {f for place in places for f in place.watch()}
                for project, places in self._places.items()
            }
            folders = set().union(*per.values())
            moved = {project for project, found in per.items() if found != self._per.get(project)}
            self._per = per
            if folders == self._folders:
                return
            self._folders = folders
            if self._threads:
                self._gap.update(moved)
        self._restart.set()

    def _work(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                while not self._queue and not self._stop.is_set():
                    self._lock.wait()
                if self._stop.is_set():
                    return
                project, what = self._queue.popleft()
                places = list(self._places.get(project, ()))
            try:
                if what == "scan":
                    self.scan(project)
                else:
                    self._changed_file(project, places, Path(what))
            except MemlsError as error:
                log.warning("agent memories of %s not indexed: %s", project, error)
            except Exception:  # one project's failure must not stop the follower
                log.exception("agent memories of %s not indexed", project)

    def _changed_file(self, project: str, places: list[Place], path: Path) -> None:
        """A memory file changed: read it again; one no longer read (it became a link that
        leads out) is forgotten."""
        for place in places:
            if not place.holds(path):
                continue
            read, _ = self._file(project, place, path)
            uri = uris.from_fs_path(str(path))
            if read is None and uri:
                with self._syncing:
                    if not self._held(uri):
                        self._put(project, uri, None, None)

    def _watch(self) -> None:
        def folders() -> list[str]:
            with self._lock:
                return sorted(str(f) for f in self._folders)

        follow(
            folders,
            self._changed,
            stop=self._stop,
            restart=self._restart,
            watching=self.watching,
            debounce_ms=DEBOUNCE_MS,
            step_ms=50,
            what="agent memories",
            settled=self._after_gap,
        )

    def _after_gap(self) -> None:
        """What changed while the watch was set up again is not heard: read those projects
        once more, now that their folders are watched."""
        with self._lock:
            gap, self._gap = self._gap, set()
            for project in sorted(gap):
                if project in self._places and (project, "scan") not in self._queue:
                    self._queue.append((project, "scan"))
            self._lock.notify_all()

    def _changed(self, changes: Iterable[tuple[watchfiles.Change, str]]) -> None:
        with self._lock:
            for change, raw in changes:
                path = Path(raw)
                for project, places in self._places.items():
                    for place in places:
                        folder_changed = (
                            path.is_dir() or change == watchfiles.Change.deleted
                        ) and any(path == f or path in f.parents for f in place.subfolders())
                        if folder_changed:
                            task = (project, "scan")
                        elif place.holds(path):
                            task = (project, str(path))
                        else:
                            continue
                        if task not in self._queue:
                            self._queue.append(task)
            self._lock.notify_all()
