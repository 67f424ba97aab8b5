"""The one service API: every front (CLI, LSP, MCP, the owner socket) calls this and nothing
below it. Each method takes a params Struct of `memls.protocol` and returns a result Struct;
the use cases live in modules named for what they do, composed here into one `Engine`:

    writes.py     store, supersede, forget
    notes.py      sync_note
    reads.py      get, list, query, forgotten, audit, stats
    review.py     feedback, review
    conflicts.py  detection after indexing, conflicts, resolve, check_pair
    admin.py      health, doctor, reindex, maintain, dead_letters, export, import_
    briefing.py   context (a plain use case given its collaborators, not a base class)
    promote.py    promote (likewise)
    core.py       the state they share (store, index, models, indexer, listeners, clock)
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Self

from memls import protocol, timeutil
from memls.config import data_dir, ensure_private_dir, load_settings
from memls.engine.admin import Admin
from memls.engine.briefing import Briefing
from memls.engine.core import Clock
from memls.engine.promote import Promote
from memls.engine.review import Review
from memls.models import ModelRuntime
from memls.models.tokens import TokenCounter
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

    @functools.cached_property
    def _briefing(self) -> Briefing:
        return Briefing(
            list_memories=self.list,
            query=self.query,
            sessions=self.storage.briefing_sessions,
            given=self.storage.briefing_given,
            counter=TokenCounter(self.settings.embedder_dir),
            clock=self.clock,
        )

    @functools.cached_property
    def _promote(self) -> Promote:
        return Promote(
            write=self._write,
            get=self.get,
            sync_note=self.sync_note,
            changed=self._changed,
            clock=self.clock,
        )

    def context(self, params: protocol.ContextParams) -> protocol.ContextResult:
        """The briefing of a project within a token budget (engine/briefing.py)."""
        return self._briefing.context(params)

    def promote(self, params: protocol.PromoteParams) -> protocol.PromoteResult:
        """A memory written into a note of the project; it becomes that unit (engine/promote.py)."""
        return self._promote.promote(params)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
