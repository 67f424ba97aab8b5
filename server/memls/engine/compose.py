"""The use cases wired to the parts they use: each shared part (units of work, listeners,
indexing, the query cache, the index, the models) is made once here or by `Engine.open` and
handed to the constructors of the use cases that name it. A use case that needs another's
behaviour gets that one method. A new use case is built here and named in `UseCases`."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from memls.config import Settings
from memls.dedup.lookup import NearDuplicates
from memls.engine.admin import Admin
from memls.engine.adopt import Adopt
from memls.engine.briefing import Briefing
from memls.engine.cache import QueryCache
from memls.engine.citations import Citations
from memls.engine.conflicts import Conflicts
from memls.engine.notes import Notes
from memls.engine.privacy import StoredSecrets
from memls.engine.promote import Promote
from memls.engine.reads import Reads
from memls.engine.restates import NoteRestatements
from memls.engine.review import Review
from memls.engine.shared import Announcer, Clock, Indexing, Units, degraded
from memls.engine.transfers import Transfers
from memls.engine.writes import Writes
from memls.index.chroma import VectorIndex
from memls.index.outbox import Indexer
from memls.models import ModelRuntime
from memls.models.tokens import TokenCounter
from memls.notes import table as notes_table
from memls.retrieval.pipeline import RetrievalConfig
from memls.store.citations import cited_projects
from memls.store.sources import NoteUnitQueries
from memls.store.unit import Store


@dataclass(frozen=True)
class UseCases:
    """One engine's use cases and the shared parts made for them."""

    units: Units
    announcer: Announcer
    indexing: Indexing
    writes: Writes
    notes: Notes
    reads: Reads
    review: Review
    citations: Citations
    conflicts: Conflicts
    admin: Admin
    transfers: Transfers
    adopt: Adopt
    briefing: Briefing
    promote: Promote


def compose(
    storage: Store,
    *,
    directory: Path,
    settings: Settings,
    front: str,
    clock: Clock,
    retrieval: RetrievalConfig,
    cache: QueryCache,
    models: ModelRuntime | None,
    index: VectorIndex | None,
) -> UseCases:
    # Query answers until the next write of their project: every committed unit of work and
    # every indexer batch reaches `invalidate` through the store (engine/cache.py).
    storage.on_commit.append(cache.invalidate)
    units = Units(storage, front)
    announcer = Announcer(storage.after_commit)
    indexer = Indexer(
        storage,
        index,
        models.embedder if models else None,
        late=models.late if models else None,
    )
    indexing = Indexing(indexer)
    status = functools.partial(degraded, models, indexer)

    redact = settings.secrets == "redact"  # [privacy] secrets
    near = NearDuplicates(storage.search, index, models)
    writes = Writes(units, clock, indexing, announcer, near=near, redact=redact)
    citations = Citations(
        units.write,
        units.read,
        clock,
        announcer.changed,
        projects=functools.partial(cited_projects, storage.db),
    )
    reads = Reads(
        units,
        storage,
        clock,
        cache,
        retrieval,
        index,
        models,
        directory=directory,
        degraded=status,
    )
    conflicts = Conflicts(
        units,
        storage.search,
        clock,
        index,
        models,
        indexing,
        announcer,
        auto_supersede=settings.auto_supersede,
        supersede=writes.supersede,
    )

    # the write-time checks of a batch just embedded: restatements merged, then the
    # contradiction check of the rest
    # restatements across note files linked in between
    restatements = NoteRestatements(
        units, NoteUnitQueries(storage.db, storage.tokens), near, clock, announcer
    )
    indexer.after_index = functools.partial(
        writes.after_index,
        then=functools.partial(restatements.after_index, then=conflicts.after_index),
    )
    notes = Notes(
        units,
        clock,
        indexing,
        announcer,
        notes_table(settings.note_globs, settings.instruction_globs, settings.record_globs),
    )
    return UseCases(
        units=units,
        announcer=announcer,
        indexing=indexing,
        writes=writes,
        notes=notes,
        reads=reads,
        review=Review(
            units,
            clock,
            indexing,
            announcer,
            list_memories=reads.list,
            cited_code_changed=citations.cited_code_changed,
        ),
        citations=citations,
        conflicts=conflicts,
        admin=Admin(
            units,
            storage,
            clock,
            index,
            models,
            indexing,
            announcer,
            directory=directory,
            ttl_days=settings.ttl_days,
            degraded=status,
            stored_secrets=StoredSecrets(units, clock, indexing, announcer),
        ),
        transfers=Transfers(
            units,
            storage,
            clock,
            indexing,
            announcer,
            vectors=index is not None,
            store=writes.store,
            redact=redact,
        ),
        adopt=Adopt(
            units, storage, clock, indexing, announcer, vectors=index is not None, redact=redact
        ),
        briefing=Briefing(
            list_memories=reads.list,
            query=reads.query,
            indexed_rows=storage.search.indexed_rows,
            sessions=storage.briefing_sessions,
            given=storage.briefing_given,
            counter=TokenCounter(settings.embedder_dir),
            clock=clock,
            instruction_units=notes.instruction_units,
            get=reads.get,
        ),
        promote=Promote(
            write=units.write,
            get=reads.get,
            sync_note=notes.sync_note,
            changed=announcer.changed,
            clock=clock,
        ),
    )
