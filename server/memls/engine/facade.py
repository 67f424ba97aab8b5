"""The one service API: every front (CLI, LSP, MCP, the owner socket) calls this and nothing
below it. Each method takes a params Struct of `memls.protocol` and returns a result Struct;
the use cases live in modules named for what they do, composed here into one `Engine`:

    writes.py     store, supersede, forget
    notes.py      sync_note
    reads.py      get, list, query, forgotten, audit, stats
    review.py     feedback, review
    conflicts.py  detection after indexing, conflicts, resolve, check_pair
    admin.py      health, doctor, reindex, maintain, dead_letters, export, import_
    core.py       the state they share (store, index, models, indexer, listeners, clock)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from memls import protocol, timeutil
from memls.config import data_dir, ensure_private_dir, load_settings
from memls.engine.admin import Admin
from memls.engine.core import Clock
from memls.engine.review import Review
from memls.models import ModelRuntime
from memls.ownership import OwnerLock
from memls.retrieval.pipeline import RetrievalConfig
from memls.store.db import DB_NAME, Database


class Engine(Admin, Review):
    """Owns one data directory: its SQLite record, the vector index and the models."""

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
    ) -> Self:
        """Take ownership of the data directory (creating it owner-only) and open the store.

        vectors=None follows the settings (on by default); False runs lexical-only.
        cache=None follows [retrieval] cache (on by default); False: every query is computed
        afresh (benchmarks report uncached numbers).
        """
        path = ensure_private_dir(data_dir(directory))
        lock = OwnerLock(path)
        lock.acquire(wait_seconds)
        try:
            settings = load_settings(path)
            db = Database(path / DB_NAME)
        except BaseException:
            lock.release()
            raise
        engine = cls(
            db,
            directory=path,
            settings=settings,
            front=front,
            clock=clock,
            lock=lock,
            retrieval=retrieval,
            cache=cache,
        )
        try:
            if settings.vectors if vectors is None else vectors:
                engine.attach_vectors(models)
            engine.start_worker()
        except BaseException:
            engine.close(flush_timeout=0)  # releases the database and the lock
            raise
        return engine

    # ------------------------------------------------------------ citations (engine/citations.py)

    def check_citations(self, params: protocol.CheckParams) -> protocol.CheckResult:
        return self.citing.check(params)

    def citations(self, params: protocol.CitationsParams) -> protocol.CitationsResult:
        return self.citing.citations(params)

    def reconfirm(self, params: protocol.ReconfirmParams) -> protocol.ReconfirmResult:
        return self.citing.reconfirm(params)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
