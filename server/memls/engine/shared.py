"""What the use cases share, made once by `Engine.open` and handed to each use case that uses
it: the store's units of work opened as the acting front (`Units`), the listeners
(`Announcer`), the drain of the outbox into the vector index (`Indexing`), and the checks
every use case applies to its input."""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memls import protocol
from memls.engine.progress import Work
from memls.errors import InvalidInput, NotFound
from memls.index.outbox import Indexer
from memls.index.worker import IndexWorker
from memls.models import ModelRuntime
from memls.store.unit import Store, Tx

MAX_TEXT = 64 * 1024
_FRONT: contextvars.ContextVar[str | None] = contextvars.ContextVar("memls_front", default=None)
log = logging.getLogger("memls.engine")

Clock = Callable[[], str]
Listener = Callable[[str, Any], None]


class Units:
    """The store's units of work (one transaction, one project), opened as the front acting
    now: socket clients say theirs (`acting_for`), else the engine's own."""

    def __init__(self, storage: Store, front: str) -> None:
        self._storage = storage
        self._default_front = front

    @property
    def front(self) -> str:
        return _FRONT.get() or self._default_front

    @contextmanager
    def acting_for(self, front: str | None) -> Iterator[None]:
        """Record the calls made inside as made by `front` (audit, logs)."""
        token = _FRONT.set(front)
        try:
            yield
        finally:
            _FRONT.reset(token)

    @contextmanager
    def write(self, project: str) -> Iterator[Tx]:
        with self._storage.write(project, self.front) as tx:
            yield tx

    @contextmanager
    def read(self, project: str) -> Iterator[Tx]:
        with self._storage.read(project, self.front) as tx:
            yield tx


class Announcer:
    """Tells the listeners (the fronts) what changed, once the write that caused it has
    committed, and how long work is going."""

    def __init__(self, after_commit: Callable[[Callable[[], None]], None]) -> None:
        self._after_commit = after_commit
        self.listeners: list[Listener] = []

    def changed(self, project: str, op: str, ids: list[str]) -> None:
        if ids:
            self.notify(
                "memory/changed", protocol.ChangedNotification(project=project, op=op, ids=ids)
            )

    def notify(self, method: str, payload: Any) -> None:
        """Told after commit: a change made inside an outer transaction (resolve ->
        supersede) that rolls back is never announced."""
        self._after_commit(lambda: self.deliver(method, payload))

    def work(self, project: str, title: str) -> Work:
        """Long work of `project` told to the listeners as memory/progress (begin, reports,
        end): the CLI draws a bar from it, the daemon sends `$/progress` to the editor."""
        return Work(lambda payload: self.deliver("memory/progress", payload), project, title)

    def deliver(self, method: str, payload: Any) -> None:
        for listener in list(self.listeners):
            try:
                listener(method, payload)
            except Exception:
                log.exception("listener failed for %s", method)


class Indexing:
    """The outbox's drain into the vector index: the indexer and, once started, the
    background worker that runs it whenever a write kicks it."""

    def __init__(self, indexer: Indexer) -> None:
        self.indexer = indexer
        self.worker: IndexWorker | None = None

    def start(self) -> None:
        if self.worker is None:
            self.worker = IndexWorker(self.indexer)
            self.worker.kick()  # start-up drain: whatever a crash left in the outbox

    def kick(self) -> None:
        if self.worker is not None:
            self.worker.kick()

    def flush(self, timeout: float = 120.0) -> bool:
        """Wait until every acknowledged write is in the vector index (True when it is)."""
        return True if self.worker is None else self.worker.flush(timeout)

    def drain_by(self, until: float, *, batch: int, first_step: float, start_by: float) -> bool:
        """Index the outbox in the calling thread, `batch` rows a step, beginning a step only
        up to `start_by` and only when it should end by `until` (time.monotonic() values):
        the first is expected to take `first_step` (loading the models included), each next
        one as long as the last took. True when the outbox is empty; the rows left stay in
        it for the next owner."""
        last = {"step": first_step, "at": -1.0}

        def go_on() -> bool:
            now = time.monotonic()
            if last["at"] >= 0:
                last["step"] = now - last["at"]
            last["at"] = now
            return now <= start_by and now + last["step"] <= until

        try:
            self.indexer.drain(batch, go_on=go_on)
        except Exception as exc:  # noqa: BLE001 - kept in the outbox for the next owner
            log.warning("indexing failed, the outbox keeps the rows: %s", exc)
        return self.indexer.pending() == 0

    def stop(self, flush_timeout: float) -> None:
        if self.worker is not None:
            self.worker.flush(flush_timeout)
            self.worker.stop()
            self.worker = None

    def wait(self, work: Work, project: str, total: int, timeout: float) -> bool:
        """Wait until the indexer has drained the outbox (True) or fails or `timeout` ends
        (False), telling `work` how many of the project's `total` rows are in the index."""
        if self.worker is None:
            return True
        work.start("indexing", total)
        deadline = time.monotonic() + timeout
        while True:
            drained = self.worker.flush(timeout=max(0.0, min(0.25, deadline - time.monotonic())))
            work.advance(total - self.indexer.pending(project))
            if drained:
                return True
            if (self.indexer.last_error and self.indexer.pending()) or (
                time.monotonic() >= deadline
            ):
                return False


def degraded(models: ModelRuntime | None, indexer: Indexer) -> list[str]:
    """Every reason retrieval is weaker than configured; empty when all is well."""
    if models is None:
        return ["vector search and reranking are switched off (vectors = false)"]
    problems = []
    for status in models.statuses():
        if status.state not in ("loaded", "not_loaded", "disabled"):
            problems.append(f"{status.name} {status.state}: {status.error or ''}".strip())
    if indexer.last_error:
        problems.append(f"indexing is failing: {indexer.last_error}")
    return problems


def checked_text(value: str | None, field: str, *, required: bool = True) -> str | None:
    if value is None or not value.strip():
        if required:
            raise InvalidInput("must not be empty", field=field)
        return None
    if len(value) > MAX_TEXT:
        raise InvalidInput(f"longer than {MAX_TEXT} characters", field=field)
    return value


def require(tx: Tx, memory_id: object, field: str = "id") -> Any:
    """The row of a memory of the transaction's project; NotFound (naming a forgetting when
    there was one) otherwise."""
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise InvalidInput("a memory id is required", field=field)
    row = tx.memories.fetch(memory_id.strip())
    if row is None:
        gone = tx.forgetting.last(memory_id.strip())
        extra = f" (forgotten {gone['at']}, reason {gone['reason']})" if gone else ""
        raise NotFound(
            f"no memory {memory_id.strip()} in project {tx.project!r}{extra}", field=field
        )
    return row


def fetch_memory(tx: Tx, memory_id: str) -> protocol.Memory:
    return tx.records([require(tx, memory_id)])[0]
