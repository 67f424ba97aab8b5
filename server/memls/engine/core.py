"""The engine's own state: the data directory it owns, the store, the vector index and models
it attached, the background indexer, the listeners it tells, and who is acting."""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memls import protocol, timeutil
from memls.config import Settings, model_cache_dir
from memls.engine.cache import QueryCache
from memls.engine.citations import Citations
from memls.engine.progress import Work
from memls.errors import InvalidInput, NotFound
from memls.index.chroma import VectorIndex
from memls.index.outbox import Indexer
from memls.index.worker import IndexWorker
from memls.models import ModelRuntime
from memls.ownership import OwnerLock
from memls.retrieval.pipeline import RetrievalConfig
from memls.scope import USER_PROJECT, Visibility
from memls.store.db import Database
from memls.store.unit import Store, Tx

MAX_TEXT = 64 * 1024
_FRONT: contextvars.ContextVar[str | None] = contextvars.ContextVar("memls_front", default=None)
log = logging.getLogger("memls.engine")

Clock = Callable[[], str]
Listener = Callable[[str, Any], None]


class EngineCore:
    """Owns one data directory: its SQLite record, and (when attached) index and models."""

    def __init__(
        self,
        db: Database,
        *,
        directory: Path,
        settings: Settings | None = None,
        front: str = "api",
        clock: Clock = timeutil.now,
        lock: OwnerLock | None = None,
        retrieval: RetrievalConfig | None = None,
        cache: bool | None = None,
    ) -> None:
        self.db = db
        self.storage = Store(db)
        self.directory = directory
        self.settings = settings or Settings()
        self._default_front = front
        self.clock = clock
        self._lock = lock
        tuned: dict[str, Any] = dict(self.settings.retrieval)
        self.retrieval = retrieval or RetrievalConfig(rerank=self.settings.rerank, **tuned)
        self.models: ModelRuntime | None = None
        self.index: VectorIndex | None = None
        self._own_models = True
        self.indexer = Indexer(self.storage, None, None, after_index=self._after_index)
        self.worker: IndexWorker | None = None
        self.listeners: list[Listener] = []
        self._warming: threading.Thread | None = None
        self._background: list[threading.Thread] = []  # joined by close()
        # Query answers until the next write of their project: every committed unit of work
        # and every indexer batch reaches `invalidate` through the store (engine/cache.py).
        # cache=False (benchmarks: uncached numbers) or [retrieval] cache = false: no cache.
        self.cache = QueryCache(
            self.settings.query_cache_entries,
            enabled=self.settings.query_cache if cache is None else cache,
        )
        self.storage.on_commit.append(self.cache.invalidate)
        self.citing = Citations(self._write, self._read, lambda: self.clock(), self._changed)

    # ------------------------------------------------------------ who acts

    @property
    def front(self) -> str:
        """Who is acting: the front of the current call (socket clients say theirs), else
        this engine's own."""
        return _FRONT.get() or self._default_front

    @contextmanager
    def acting_for(self, front: str | None) -> Iterator[None]:
        """Record the calls made inside as made by `front` (audit, logs)."""
        token = _FRONT.set(front)
        try:
            yield
        finally:
            _FRONT.reset(token)

    # ------------------------------------------------------------ index and models

    @property
    def vectors_enabled(self) -> bool:
        return self.index is not None

    def attach_vectors(self, models: ModelRuntime | None = None) -> None:
        """Chroma + the ONNX models (both lazy: nothing loads until first use).

        `models`: a ModelRuntime to share (tests, benchmarks); the engine then does not close it.
        """
        self._own_models = models is None
        self.models = models or ModelRuntime(
            embedder_dir=self.settings.embedder_dir,
            reranker_dir=self.settings.reranker_dir,
            rerank=self.settings.rerank,
            rerank_off_by=self.settings.rerank_off_by,
            cache_dir=model_cache_dir(),
        )
        self.index = VectorIndex(self.directory, url=self.settings.chroma_url)
        self.indexer.index = self.index
        self.indexer.embedder = self.models.embedder
        self.indexer.late = self.models.late

    def warm(self) -> threading.Thread | None:
        """Start loading, in the background, what the first query needs: the Chroma client and
        both models, side by side (models on their own pool). Long-lived owners (the daemon)
        call it right after start; failures show in `stats`/`doctor` as before. None when
        vectors are off."""
        if self.models is None or self.index is None:
            return None
        models, index = self.models, self.index

        def load() -> None:
            loads = models.start_warm()
            try:
                index.client  # noqa: B018 - imports chromadb and opens the store
            except Exception as exc:  # noqa: BLE001 - the first real use reports it
                log.warning("vector store did not open in the background: %s", exc)
            for done in loads:
                done.exception()  # wait; model failures live in the models' status

        thread = self._warming = threading.Thread(target=load, name="memls-warm", daemon=True)
        thread.start()
        return thread

    def start_worker(self) -> None:
        """The background drain of the outbox (index + contradiction check)."""
        if self.worker is None:
            self.worker = IndexWorker(self.indexer)
            self.worker.kick()  # start-up drain: whatever a crash left in the outbox

    def _kick(self) -> None:
        if self.worker is not None:
            self.worker.kick()

    def flush(self, timeout: float = 120.0) -> bool:
        """Wait until every acknowledged write is in the vector index (True when it is)."""
        return True if self.worker is None else self.worker.flush(timeout)

    def _after_index(self, project: str, rows: list[Any], vectors: Any) -> None:
        """Runs on the indexer thread after new memories are embedded (the conflicts module
        defines it)."""

    def degraded(self) -> list[str]:
        """Every reason retrieval is weaker than configured; empty when all is well."""
        if self.models is None:
            return ["vector search and reranking are switched off (vectors = false)"]
        problems = []
        for status in self.models.statuses():
            if status.state not in ("loaded", "not_loaded", "disabled"):
                problems.append(f"{status.name} {status.state}: {status.error or ''}".strip())
        if self.indexer.last_error:
            problems.append(f"indexing is failing: {self.indexer.last_error}")
        return problems

    # ------------------------------------------------------------ life cycle

    def adopt(self, thread: threading.Thread | None) -> None:
        """A background job on this engine's store (the start-up index check) that close()
        waits for: left running into the interpreter's teardown, the index check crashed the
        process with SIGSEGV in native code (3 of 6 daemon-style runs on a 10k store)."""
        if thread is not None:
            self._background.append(thread)

    def close(self, flush_timeout: float = 60.0) -> None:
        if self._warming is not None:  # nothing of ours opens after the lock is released
            self._warming.join()
            self._warming = None
        for thread in self._background:
            thread.join(flush_timeout)
        self._background.clear()
        if self.worker is not None:
            self.worker.flush(flush_timeout)
            self.worker.stop()
            self.worker = None
        if self.models is not None and self._own_models:
            self.models.close()
        if self.index is not None:
            self.index.close()
        self.storage.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ------------------------------------------------------------ helpers of every use case

    @contextmanager
    def _write(self, project: str) -> Iterator[Tx]:
        with self.storage.write(project, self.front) as tx:
            yield tx

    @contextmanager
    def _read(self, project: str) -> Iterator[Tx]:
        with self.storage.read(project, self.front) as tx:
            yield tx

    @staticmethod
    def _require(tx: Tx, memory_id: object, field: str = "id") -> Any:
        """The row of a memory of the transaction's project; NotFound (naming a forgetting
        when there was one) otherwise."""
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

    def _memory(self, tx: Tx, memory_id: str) -> protocol.Memory:
        return tx.records([self._require(tx, memory_id)])[0]

    @staticmethod
    def _text(value: str | None, field: str, *, required: bool = True) -> str | None:
        if value is None or not value.strip():
            if required:
                raise InvalidInput("must not be empty", field=field)
            return None
        if len(value) > MAX_TEXT:
            raise InvalidInput(f"longer than {MAX_TEXT} characters", field=field)
        return value

    def visibility(
        self,
        project: str,
        *,
        valid_at: str | None,
        as_of: str | None,
        include_user: bool,
        types: Iterable[str] | None = None,
    ) -> Visibility:
        projects = (project, USER_PROJECT) if include_user else (project,)
        return Visibility(
            projects=projects,
            now=self.clock(),
            valid_at=timeutil.parse_ts(valid_at, field="validAt") if valid_at else None,
            as_of=timeutil.parse_ts(as_of, field="asOf") if as_of else None,
            types=tuple(types) if types else None,
        )

    # ------------------------------------------------------------ telling the fronts

    def _changed(self, project: str, op: str, ids: list[str]) -> None:
        if ids:
            self._notify(
                "memory/changed", protocol.ChangedNotification(project=project, op=op, ids=ids)
            )

    def _notify(self, method: str, payload: Any) -> None:
        """Tell the listeners, once the write that caused it has committed: a change made
        inside an outer transaction (resolve -> supersede) that rolls back is never announced."""
        self.storage.after_commit(lambda: self._deliver(method, payload))

    def _work(self, project: str, title: str) -> Work:
        """Long work of `project` told to the listeners as memory/progress (begin, reports,
        end): the CLI draws a bar from it, the daemon sends `$/progress` to the editor."""
        return Work(lambda payload: self._deliver("memory/progress", payload), project, title)

    def _deliver(self, method: str, payload: Any) -> None:
        for listener in list(self.listeners):
            try:
                listener(method, payload)
            except Exception:
                log.exception("listener failed for %s", method)
