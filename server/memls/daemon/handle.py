"""open_engine: the one way a front gets an engine handle for a data directory.

Either this process takes the owner lock and gets the local `Engine` (serving it on the socket
when `serve=True`), or another process owns the directory and this one gets a `RemoteEngine`
talking to it. Both have the same methods, params and results.

Takeover, for a long-lived front (the LSP daemon) that got a RemoteEngine:

    engine = open_engine(directory, front="lsp", serve=True)
    ...
    try:
        result = engine.query(params)
    except OwnerExited:                # the owner died or stopped: take over
        engine = reconnect(engine)     # same arguments, listeners carried over
        result = engine.query(params)  # reads are safe to retry; see below for writes

`RemoteEngine.on_close` callbacks fire as soon as the owner's connection drops, so the daemon
can also take over eagerly (do it off the reader thread's caller: schedule `reconnect` on the
daemon's own loop). A write whose reply was lost raises OwnerExited saying its outcome is
unknown: acknowledged writes are durable (SQLite, synchronous=FULL), a retried `store` of the
same text comes back as `duplicate=True` rather than a second copy.

A call that must end by a time (a `memls` command) opens with `deadline=` (a
`time.monotonic()` value): reaching the store waits until then at most, every request to an
owner waits until then at most (OwnerSilent), and a process that takes the store itself
indexes the outbox when it closes, in small steps, none begun that would end past the
deadline; what it leaves in the outbox is indexed by the next owner.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, cast

from memls import protocol
from memls.config import data_dir, ensure_private_dir
from memls.daemon.citewatch import CitationWatcher
from memls.daemon.client import OwnerExited, OwnerSilent, OwnerUnavailable, RemoteEngine
from memls.daemon.notewatch import NoteWatcher, folder_of
from memls.daemon.owner import OwnerServer
from memls.daemon.sockets import remove_stale_socket, socket_path
from memls.engine import Engine
from memls.errors import StoreError
from memls.index import integrity
from memls.ownership import LOCK_NAME, OwnerLock
from memls.scope import project_key

__all__ = [
    "EngineHandle",
    "LocalEngine",
    "OwnerExited",
    "OwnerSilent",
    "RemoteEngine",
    "open_engine",
    "reconnect",
]


class EngineHandle(Protocol):
    """What a front holds: the local engine or a client of the owner's socket, the same
    methods either way (every `protocol.METHODS` entry's engine method, taking its params
    Struct and returning its result Struct), plus these. A front never asks which it has."""

    directory: Path
    front: str
    listeners: list[Callable[[str, Any], None]]
    subscribed_projects: frozenset[str] | None
    vectors_enabled: bool
    deadline: float | None  # time.monotonic() by which each call must end; None: no bound

    def subscribe(self, projects: Iterable[str] | None = None) -> None: ...

    def flush(self, timeout: float = 120.0) -> bool: ...

    def export(self, project: str | None) -> Iterator[dict[str, Any]]: ...

    def import_(
        self, project: str | None, lines: Iterable[str], *, redact: bool = False
    ) -> dict[str, int]: ...

    def close(self, flush_timeout: float = ...) -> None: ...

    def __enter__(self) -> EngineHandle: ...

    def __exit__(self, *exc: object) -> None: ...

    # the memory/* methods (protocol.METHODS)
    def store(self, params: protocol.StoreParams) -> protocol.StoreResult: ...
    def query(self, params: protocol.QueryParams) -> protocol.QueryResult: ...
    def get(self, params: protocol.GetParams) -> protocol.Memory: ...
    def list(self, params: protocol.ListParams) -> protocol.ListResult: ...
    def feedback(self, params: protocol.FeedbackParams) -> protocol.FeedbackResult: ...
    def forget(self, params: protocol.ForgetParams) -> protocol.ForgetResult: ...
    def supersede(self, params: protocol.SupersedeParams) -> protocol.SupersedeResult: ...
    def review(self, params: protocol.ReviewParams) -> protocol.ReviewResult: ...
    def forgotten(self, params: protocol.ForgottenParams) -> protocol.ForgottenResult: ...
    def conflicts(self, params: protocol.ConflictsParams) -> protocol.ConflictsResult: ...
    def resolve(self, params: protocol.ResolveParams) -> protocol.ResolveResult: ...
    def check_pair(self, params: protocol.CheckPairParams) -> protocol.Verdict: ...
    def stats(self, params: protocol.StatsParams) -> protocol.StatsResult: ...
    def audit(self, params: protocol.AuditParams) -> protocol.AuditResult: ...
    def maintain(self, params: protocol.MaintainParams) -> protocol.MaintainResult: ...
    def dead_letters(self, params: protocol.MaintainParams) -> protocol.DeadLettersResult: ...
    def reindex(self, params: protocol.ReindexParams) -> protocol.ReindexResult: ...
    def doctor(self, params: protocol.DoctorParams) -> protocol.DoctorResult: ...
    def sync_note(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult: ...
    def health(self, params: protocol.HealthParams) -> protocol.HealthResult: ...
    def import_from(self, params: protocol.ImportFromParams) -> protocol.ImportFromResult: ...
    def ingest(self, params: protocol.IngestParams) -> protocol.IngestResult: ...
    def check_citations(self, params: protocol.CheckParams) -> protocol.CheckResult: ...
    def citations(self, params: protocol.CitationsParams) -> protocol.CitationsResult: ...
    def reconfirm(self, params: protocol.ReconfirmParams) -> protocol.ReconfirmResult: ...
    def context(self, params: protocol.ContextParams) -> protocol.ContextResult: ...
    def promote(self, params: protocol.PromoteParams) -> protocol.PromoteResult: ...
    def watch(self, params: protocol.WatchParams) -> protocol.WatchResult: ...
    def unwatch(self, params: protocol.UnwatchParams) -> protocol.UnwatchResult: ...
    def watched(self, params: protocol.WatchedParams) -> protocol.WatchedResult: ...


RETRY_SLEEP = 0.05
# A process that owns the store for one call with a deadline (a `memls` command) indexes the
# outbox when it closes: its own writes, and as much of what a killed owner left as a short
# while allows, not the whole backlog (297 rows took 23 s, benchmarks/results/cli-takeover-
# before.txt). Steps of BOUNDED_INDEX_BATCH rows (0.3-1.4 s each on 2 shared cores), begun
# only within INDEX_WHILE of closing and when they should end CLOSE_RESERVE (closing the
# store) before the deadline. The first loads the models: 1.8-3.8 s at a load average of 7-9
# on 2 cores, about 8 s at 17-21; it is expected to take FIRST_STEP, or STEP_PER_LOAD for each
# unit of load average per core if more.
BOUNDED_INDEX_BATCH = 8
INDEX_WHILE = 2.0
FIRST_STEP = 2.5
STEP_PER_LOAD = 1.0
CLOSE_RESERVE = 1.0


def _first_step() -> float:
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except (OSError, AttributeError):  # no load average on this system
        per_core = 0.0
    return max(FIRST_STEP, STEP_PER_LOAD * per_core)


class LocalEngine(Engine):
    """The Engine of the owning process, and the socket server when it serves one.

    close() stops the server (removing the socket) before closing the store and releasing
    the lock.
    """

    server: OwnerServer | None = None
    watcher: CitationWatcher | None = None
    notes_watcher: NoteWatcher | None = None
    open_args: dict[str, Any] = {}
    subscribed_projects: frozenset[str] | None = None
    deadline: float | None = None

    def subscribe(self, projects: Iterable[str] | None = None) -> None:
        """Every notification of this process's engine reaches its listeners already; the
        scope is kept so that a handover to another owner subscribes with it."""
        self.subscribed_projects = None if projects is None else frozenset(projects)

    def serve(self) -> OwnerServer:
        """Start serving the socket (idempotent)."""
        if self.server is None:
            self.server = OwnerServer(self, self.directory).start()
        return self.server

    def watch_citations(self) -> CitationWatcher:
        """Start the watcher of cited code (idempotent): the owner's, whatever the front."""
        if self.watcher is None:
            self.watcher = CitationWatcher(self)
            self.watcher.start()
        return self.watcher

    def watch_notes(self) -> NoteWatcher:
        """Start the watcher of the watched projects' notes (idempotent): the owner's."""
        if self.notes_watcher is None:
            self.notes_watcher = NoteWatcher(self, self._sync_from_disk).start()
        return self.notes_watcher

    def _sync_from_disk(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        return Engine.sync_note(self, params)

    def sync_note(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        """A front's sync: an editor's open buffer (`open`) is left to the editor by the
        note watcher until the editor syncs it from the disk again."""
        watcher = self.notes_watcher or NoteWatcher(self, self._sync_from_disk)
        return watcher.editor_sync(params)

    def watch(self, params: protocol.WatchParams) -> protocol.WatchResult:
        """memory/watch: the project's notes indexed and, by a serving owner, followed; a
        process that does not serve (a CLI command owning the store for a moment) records
        the project for the next owner and indexes its notes once."""
        project = str(folder_of(project_key(params.project)))
        if self.notes_watcher is not None:
            return self.notes_watcher.watch(project, self.front, params.wait, params.reread)
        added = self.add_watched(project, self.front)
        notes, refused, warnings = NoteWatcher(self, self._sync_from_disk).scan_once(project)
        return protocol.WatchResult(
            project=project,
            added=added,
            watching=False,
            indexed=True,
            notes=notes,
            refused=refused,
            warnings=warnings,
        )

    def unwatch(self, params: protocol.UnwatchParams) -> protocol.UnwatchResult:
        project = project_key(params.project)
        if self.notes_watcher is not None:
            removed = self.notes_watcher.unwatch(project)
        else:
            removed = self.remove_watched(project)
        return protocol.UnwatchResult(project=project, removed=removed)

    def watched(self, params: protocol.WatchedParams) -> protocol.WatchedResult:
        listed = []
        for project, via, since in self.watched_projects():
            exists = Path(project).is_dir()
            notes = (
                len(self.notes_watcher.notes_of(project))
                if self.notes_watcher is not None
                else len(self.note_uris(project))
            )
            listed.append(
                protocol.WatchedProject(
                    project=project, via=via, since=since, exists=exists, notes=notes
                )
            )
        return protocol.WatchedResult(projects=listed)

    def close(self, flush_timeout: float = 60.0) -> None:
        """Stop serving and close. With a deadline (no background indexer) the outbox is
        indexed here first, as far as the deadline allows: the rows left stay in it,
        acknowledged, for the next owner to index."""
        if self.deadline is not None and self.worker is None and self._lock is not None:
            self.index_by(
                self.deadline - CLOSE_RESERVE,
                batch=BOUNDED_INDEX_BATCH,
                first_step=_first_step(),
                start_by=time.monotonic() + INDEX_WHILE,
            )
        notes_watcher, self.notes_watcher = self.notes_watcher, None
        if notes_watcher is not None:
            notes_watcher.stop()
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()
        server, self.server = self.server, None
        if server is not None:
            server.stop()
        if self._lock is not None:  # the process still owns the directory: nobody else serves
            try:
                remove_stale_socket(socket_path(self.directory))
            except StoreError:
                pass
        super().close(flush_timeout)


def _lock_is_held(directory: Path) -> bool:
    """True when another open file description holds the owner lock right now."""
    try:
        fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing the description releases a lock we may have taken
    return False


def _try_own(path: Path, front: str, engine_kw: dict[str, Any]) -> LocalEngine | None:
    """The local engine if the lock is free now; None if another process holds it."""
    for attempt in range(2):
        try:
            engine = LocalEngine.open(path, front=front, wait_seconds=0, **engine_kw)
        except StoreError:
            if _lock_is_held(path):
                return None
            if attempt:  # the lock is free and opening still fails: a real store error
                raise
            continue  # the holder let go between our two looks: try once more
        assert isinstance(engine, LocalEngine)
        return engine
    return None


def open_engine(
    directory: str | os.PathLike | None = None,
    *,
    front: str = "api",
    serve: bool = False,
    wait_seconds: float = 30.0,
    deadline: float | None = None,
    **engine_kw: Any,
) -> EngineHandle:
    """The engine handle for `directory` (default: --data-dir / $MEMLS_DATA_DIR / user dir).

    Free lock: this process owns the store and gets a LocalEngine (an Engine), serving it on
    <dir>/memls.sock when `serve` (long-lived fronts; short-lived ones like the CLI do not).
    Held lock: a RemoteEngine connected to the owner's socket. When the owner does not serve
    (another CLI command is running, or the owner is starting), keep trying both until
    `wait_seconds`, then StoreError. `deadline` (a time.monotonic() value) replaces
    `wait_seconds` and stays with the handle: see the module doc. `engine_kw` (vectors, clock,
    models, retrieval) apply only when this process owns the store.
    """
    path = ensure_private_dir(data_dir(directory))
    args = {
        "directory": path,
        "front": front,
        "serve": serve,
        "wait_seconds": wait_seconds,
        "deadline": deadline,
        **engine_kw,
    }
    started = time.monotonic()
    until = started + wait_seconds if deadline is None else deadline
    if deadline is not None and not serve:  # indexes when it closes, by the deadline
        engine_kw.setdefault("index_in_background", False)
    why = "no owner socket"
    while True:
        local = _try_own(path, front, engine_kw)
        if local is not None:
            local.open_args = args
            local.deadline = deadline
            try:
                if serve:
                    local.serve()
                    local.watch_citations()  # catches up, then follows saves of cited files
                    local.watch_notes()  # the watched projects' notes, scanned lazily
                    local.warm()  # a long-lived owner: the first query should not wait
                    local.adopt(integrity.check_in_background(local))  # Chroma deleted or broken?
                else:
                    remove_stale_socket(socket_path(path))  # we own it: any socket is stale
            except BaseException:
                local.close()
                raise
            return cast(EngineHandle, local)
        left = until - time.monotonic()
        try:
            remote = RemoteEngine.connect(
                path,
                front=front,
                timeout=max(1.0, min(10.0, left)) if deadline is None else max(0.1, left),
            )
        except OwnerUnavailable as exc:
            why = exc.message
        else:
            remote.open_args = args
            remote.deadline = deadline
            return cast(EngineHandle, remote)
        if time.monotonic() >= until:
            holder = OwnerLock(path).holder()
            raise StoreError(
                f"the data directory {path} is owned by another memls process"
                f"{f' (pid {holder})' if holder else ''} that does not serve it ({why}); "
                f"waited {time.monotonic() - started:.1f} s: stop it, retry, or use another "
                "--data-dir"
            )
        time.sleep(min(RETRY_SLEEP, max(0.0, until - time.monotonic())))


def reconnect(old: EngineHandle, **overrides: Any) -> EngineHandle:
    """Close `old` and open its directory again with the same arguments (takeover).

    If the owner is gone the lock is free and this process becomes the owner (serving when it
    was opened with serve=True); otherwise it connects to whoever owns it now. Listeners and
    on_close callbacks move to the new handle.
    """
    args = dict(getattr(old, "open_args", None) or {"directory": old.directory, "front": old.front})
    args.update(overrides)
    listeners = list(old.listeners)
    on_close = list(getattr(old, "on_close", []))
    scope = getattr(old, "subscribed_projects", None)
    try:
        old.close()
    except Exception:  # noqa: BLE001 - the old handle is being replaced anyway
        pass
    directory = args.pop("directory")
    new = open_engine(directory, **args)
    if isinstance(new, RemoteEngine):
        new.subscribed_projects = scope  # the listeners below subscribe with the same scope
        new.on_close.extend(on_close)
    new.listeners.extend(listeners)
    return new
