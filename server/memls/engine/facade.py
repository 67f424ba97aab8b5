"""The one service API: every front (CLI, LSP, MCP, the owner socket) calls this and nothing
below it. Each method takes a params Struct of `memls.protocol` and returns a result Struct.

The use cases are plain objects, each given by its constructor exactly what it uses; `Engine`
opens the parts it owns, `compose` builds the use cases from them, and `Engine` delegates:

    writes.py     Writes     store, supersede, forget
    notes.py      Notes      sync_note
    reads.py      Reads      get, list, query, forgotten, audit, stats
    review.py     Review     feedback, review
    conflicts.py  Conflicts  detection after indexing, conflicts, resolve, check_pair
    admin.py      Admin      health, doctor, reindex, maintain, dead_letters
    transfers.py  Transfers  ingest, export, import_
    adopt.py      Adopt      import_from (another memory tool's store)
    privacy.py    StoredSecrets  doctor's look for secrets older versions stored, and repair
    briefing.py   Briefing   context
    promote.py    Promote    promote
    shared.py     what they share: the units of work as the acting front, the listeners, the
                  indexing (indexer + worker), the input checks
    compose.py    which use case gets which part
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Self

from memls import protocol, timeutil
from memls.config import Settings, data_dir, ensure_private_dir, load_settings, model_cache_dir
from memls.engine.cache import QueryCache
from memls.engine.compose import compose
from memls.engine.shared import Clock, Listener, degraded
from memls.index.chroma import VectorIndex
from memls.index.outbox import Indexer
from memls.index.worker import IndexWorker
from memls.models import ModelRuntime
from memls.ownership import OwnerLock
from memls.retrieval.pipeline import RetrievalConfig
from memls.scope import Visibility
from memls.store import projects as store_projects
from memls.store.db import DB_NAME, Database
from memls.store.unit import Store

log = logging.getLogger("memls.engine")


class Engine:
    """Owns one data directory: its SQLite record, the vector index and the models."""

    def __init__(
        self,
        storage: Store,
        *,
        directory: Path,
        settings: Settings,
        front: str,
        clock: Clock,
        lock: OwnerLock | None,
        retrieval: RetrievalConfig,
        cache: QueryCache,
        models: ModelRuntime | None,
        index: VectorIndex | None,
        own_models: bool,
    ) -> None:
        """The use cases wired to the parts `open` made (`compose`)."""
        self.storage = storage
        self.db = storage.db
        self.directory = directory
        self.settings = settings
        self.clock = clock
        self.cache = cache
        self.models = models
        self.index = index
        self._lock = lock
        self._own_models = own_models
        self._warming: threading.Thread | None = None
        self._background: list[threading.Thread] = []  # joined by close()
        self._cases = compose(
            storage,
            directory=directory,
            settings=settings,
            front=front,
            clock=clock,
            retrieval=retrieval,
            cache=cache,
            models=models,
            index=index,
        )
        self.listeners: list[Listener] = self._cases.announcer.listeners

    @classmethod
    def open(
        cls,
        directory: str | Path | None = None,
        *,
        front: str = "api",
        clock: Clock = timeutil.now,
        wait_seconds: float = 10.0,
        vectors: bool | None = None,
        retrieval: RetrievalConfig | None = None,
        models: ModelRuntime | None = None,
        cache: bool | None = None,
        index_in_background: bool = True,
    ) -> Self:
        """Take ownership of the data directory (creating it owner-only) and open the store.

        vectors=None follows the settings (on by default); False runs lexical-only: no Chroma,
        no models. models: a ModelRuntime to share (tests, benchmarks); the engine then does
        not close it. cache=None follows [retrieval] cache (on by default); False: every query
        is computed afresh (benchmarks report uncached numbers). index_in_background=False: no
        worker drains the outbox; the owner indexes when it chooses (`index_by`).
        """
        path = ensure_private_dir(data_dir(directory))
        lock = OwnerLock(path)
        lock.acquire(wait_seconds)
        storage: Store | None = None
        try:
            settings = load_settings(path)
            storage = Store(Database(path / DB_NAME))
            tuned: dict[str, Any] = dict(settings.retrieval)
            config = retrieval or RetrievalConfig(rerank=settings.rerank, **tuned)
        except BaseException:
            if storage is not None:
                storage.close()
            lock.release()
            raise
        runtime = index = None
        if settings.vectors if vectors is None else vectors:
            # Chroma + the ONNX models, both lazy: nothing loads until first use (or `warm`).
            runtime = models or ModelRuntime(
                embedder_dir=settings.embedder_dir,
                reranker_dir=settings.reranker_dir,
                rerank=settings.rerank,
                rerank_off_by=settings.rerank_off_by,
                cache_dir=model_cache_dir(),
            )
            index = VectorIndex(path, url=settings.chroma_url)
        engine = cls(
            storage,
            directory=path,
            settings=settings,
            front=front,
            clock=clock,
            lock=lock,
            retrieval=config,
            cache=QueryCache(
                settings.query_cache_entries,
                enabled=settings.query_cache if cache is None else cache,
            ),
            models=runtime,
            index=index,
            own_models=models is None,
        )
        try:
            if index_in_background:
                engine.start_worker()
        except BaseException:
            engine.close(flush_timeout=0)  # releases the database and the lock
            raise
        return engine

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------ who acts, what they see

    @property
    def front(self) -> str:
        """Who is acting: the front of the current call (socket clients say theirs), else
        this engine's own."""
        return self._cases.units.front

    def acting_for(self, front: str | None) -> AbstractContextManager[None]:
        """Record the calls made inside as made by `front` (audit, logs)."""
        return self._cases.units.acting_for(front)

    @property
    def retrieval(self) -> RetrievalConfig:
        return self._cases.reads.retrieval

    @retrieval.setter
    def retrieval(self, config: RetrievalConfig) -> None:
        """Benchmarks compare configurations on one open store (also the cache's key)."""
        self._cases.reads.retrieval = config

    def visibility(
        self,
        project: str,
        *,
        valid_at: str | None,
        as_of: str | None,
        include_user: bool,
        types: Iterable[str] | None = None,
    ) -> Visibility:
        return self._cases.reads.visibility(
            project, valid_at=valid_at, as_of=as_of, include_user=include_user, types=types
        )

    # ------------------------------------------------------------ index and models

    @property
    def vectors_enabled(self) -> bool:
        return self.index is not None

    @property
    def indexer(self) -> Indexer:
        return self._cases.indexing.indexer

    @property
    def worker(self) -> IndexWorker | None:
        return self._cases.indexing.worker

    @worker.setter
    def worker(self, worker: IndexWorker | None) -> None:
        """Tests stop the worker and drive the indexer themselves."""
        self._cases.indexing.worker = worker

    def start_worker(self) -> None:
        """The background drain of the outbox (index + contradiction check)."""
        self._cases.indexing.start()

    def flush(self, timeout: float = 120.0) -> bool:
        """Wait until every acknowledged write is in the vector index (True when it is)."""
        return self._cases.indexing.flush(timeout)

    def index_by(self, until: float, *, batch: int, first_step: float, start_by: float) -> bool:
        """Index the outbox in this thread, no step begun after `start_by` or that should not
        end by `until`; True when it is empty (`Indexing.drain_by`)."""
        return self._cases.indexing.drain_by(
            until, batch=batch, first_step=first_step, start_by=start_by
        )

    def degraded(self) -> list[str]:
        """Every reason retrieval is weaker than configured; empty when all is well."""
        return degraded(self.models, self.indexer)

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
        self._cases.indexing.stop(flush_timeout)
        if self.models is not None and self._own_models:
            self.models.close()
        if self.index is not None:
            self.index.close()
        self.storage.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ------------------------------------------------------------ the use cases

    def store(self, params: protocol.StoreParams) -> protocol.StoreResult:
        return self._cases.writes.store(params)

    def supersede(self, params: protocol.SupersedeParams) -> protocol.SupersedeResult:
        return self._cases.writes.supersede(params)

    def forget(self, params: protocol.ForgetParams) -> protocol.ForgetResult:
        return self._cases.writes.forget(params)

    def check_citations(self, params: protocol.CheckParams) -> protocol.CheckResult:
        return self._cases.citations.check(params)

    def citations(self, params: protocol.CitationsParams) -> protocol.CitationsResult:
        return self._cases.citations.citations(params)

    def reconfirm(self, params: protocol.ReconfirmParams) -> protocol.ReconfirmResult:
        return self._cases.citations.reconfirm(params)

    def recheck_citations(
        self, project: str, paths: Iterable[str] | None = None
    ) -> protocol.CheckResult:
        """The owner's watcher: check the citations at `paths` (all, when None) now."""
        return self._cases.citations.recheck(project, paths)

    def cited(self) -> dict[str, list[str]]:
        """Project -> the paths its citations stand at, for every project with citations."""
        cases = self._cases.citations
        return {project: cases.cited_paths(project) for project in cases.projects()}

    def sync_note(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        return self._cases.notes.sync_note(params)

    def note_uris(self, project: str) -> list[str]:
        """The note files the project's record holds (the owner's note watcher)."""
        with self.storage.read(project) as tx:
            return list(tx.note_files.facts())

    def agent_note_uris(self, project: str) -> dict[str, str]:
        """uri -> origin of the project's note files that are an agent's own memory."""
        with self.storage.read(project) as tx:
            return tx.note_files.origins()

    def watched_projects(self) -> list[tuple[str, str, str]]:
        """(project, via, since) of each project the owner watches the notes of."""
        return store_projects.watched(self.db)

    def add_watched(self, project: str, via: str) -> bool:
        return store_projects.watch(self.db, project, via, self.clock())

    def remove_watched(self, project: str) -> bool:
        return store_projects.unwatch(self.db, project)

    def get(self, params: protocol.GetParams) -> protocol.Memory:
        return self._cases.reads.get(params)

    def context(self, params: protocol.ContextParams) -> protocol.ContextResult:
        return self._cases.briefing.context(params)

    def promote(self, params: protocol.PromoteParams) -> protocol.PromoteResult:
        return self._cases.promote.promote(params)

    def list(self, params: protocol.ListParams) -> protocol.ListResult:
        return self._cases.reads.list(params)

    def query(self, params: protocol.QueryParams) -> protocol.QueryResult:
        return self._cases.reads.query(params)

    def query_uncached(self, params: protocol.QueryParams) -> protocol.QueryResult:
        return self._cases.reads.query_uncached(params)

    def forgotten(self, params: protocol.ForgottenParams) -> protocol.ForgottenResult:
        return self._cases.reads.forgotten(params)

    def audit(self, params: protocol.AuditParams) -> protocol.AuditResult:
        return self._cases.reads.audit(params)

    def stats(self, params: protocol.StatsParams) -> protocol.StatsResult:
        return self._cases.reads.stats(params)

    def feedback(self, params: protocol.FeedbackParams) -> protocol.FeedbackResult:
        return self._cases.review.feedback(params)

    def review(self, params: protocol.ReviewParams) -> protocol.ReviewResult:
        return self._cases.review.review(params)

    def conflicts(self, params: protocol.ConflictsParams) -> protocol.ConflictsResult:
        return self._cases.conflicts.conflicts(params)

    def resolve(self, params: protocol.ResolveParams) -> protocol.ResolveResult:
        return self._cases.conflicts.resolve(params)

    def check_pair(self, params: protocol.CheckPairParams) -> protocol.Verdict:
        return self._cases.conflicts.check_pair(params)

    def health(self, params: protocol.HealthParams | None = None) -> protocol.HealthResult:
        return self._cases.admin.health(params)

    def doctor(self, params: protocol.DoctorParams) -> protocol.DoctorResult:
        return self._cases.admin.doctor(params)

    def reindex(self, params: protocol.ReindexParams) -> protocol.ReindexResult:
        return self._cases.admin.reindex(params)

    def index_counts_agree(self, project: str) -> bool:
        return self._cases.admin.index_counts_agree(project)

    def maintain(self, params: protocol.MaintainParams) -> protocol.MaintainResult:
        return self._cases.admin.maintain(params)

    def dead_letters(self, params: protocol.MaintainParams) -> protocol.DeadLettersResult:
        return self._cases.admin.dead_letters(params)

    def ingest(self, params: protocol.IngestParams) -> protocol.IngestResult:
        return self._cases.transfers.ingest(params)

    def export(self, project: str | None) -> Iterator[dict[str, Any]]:
        return self._cases.transfers.export(project)

    def import_from(self, params: protocol.ImportFromParams) -> protocol.ImportFromResult:
        return self._cases.adopt.import_from(params)

    def import_(
        self, project: str | None, lines: Iterable[str], *, redact: bool = False
    ) -> dict[str, int]:
        return self._cases.transfers.import_(project, lines, redact=redact)
