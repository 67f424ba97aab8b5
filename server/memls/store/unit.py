"""The unit of work: one transaction of one project, with a repository per table group.

    with store.write(project, front) as tx:       # BEGIN IMMEDIATE ... COMMIT
        row = tx.memories.fetch(memory_id)
        tx.forget(row, "user_deleted", now)

Every repository of a `Tx` is bound to the same connection and project; `front` (who acts) is
recorded by the ones that log it. A read opens a snapshot (`store.read`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memls import textnorm
from memls.store import transfer
from memls.store.audit import Audit
from memls.store.briefings import BriefingSessions
from memls.store.citations import Citations
from memls.store.db import Database
from memls.store.edges import Conflicts, Edges
from memls.store.feedback import Feedback, Transitions
from memls.store.forgetting import Forgetting, Tombstones
from memls.store.imported import Imported
from memls.store.maintenance import DeadLetters
from memls.store.memories import Memories, to_memories
from memls.store.notes import NoteFiles, NoteLinks, NoteUnits
from memls.store.outbox import Outbox, OutboxQueue
from memls.store.search import SearchQueries
from memls.store.sources import NoteRestates, NoteSources
from memls.store.tags import Tags
from memls.store.tokens import TOKENS_DB, TokenVectors


class Tx:
    """The repositories of one project inside one transaction."""

    def __init__(self, conn: sqlite3.Connection, project: str, front: str) -> None:
        self.conn = conn
        self.project = project
        self.front = front
        self.memories = Memories(conn, project)
        self.edges = Edges(conn, project)
        self.conflicts = Conflicts(conn, project)
        self.forgetting = Forgetting(conn, project)
        self.tombstones = Tombstones(conn, project)
        self.audit_log = Audit(conn, project)
        self.feedback = Feedback(conn, project)
        self.transitions = Transitions(conn, project)
        self.outbox = Outbox(conn, project)
        self.dead_letters = DeadLetters(conn, project)
        self.note_units = NoteUnits(conn, project)
        self.note_files = NoteFiles(conn, project)
        self.note_links = NoteLinks(conn, project)
        self.note_sources = NoteSources(conn, project)
        self.note_restates = NoteRestates(conn, project)
        self.citations = Citations(conn, project)
        self.imported = Imported(conn, project)
        self.tags = Tags(conn, project)

    def audit(self, op: str, memory_id: str | None, at: str, **detail: Any) -> None:
        self.audit_log.add(op, memory_id, at, self.front, **detail)

    def records(self, rows: list[sqlite3.Row]) -> list[Any]:
        """Rows as wire records (protocol.Memory), with their supersession links."""
        return to_memories(self.conn, rows)

    def forget(self, row: sqlite3.Row, reason: str, at: str) -> None:
        """Remove a memory: forgetting log, tombstone, the row (its edges and tags cascade),
        outbox, audit."""
        memory_id = row["id"]
        self.forgetting.log(
            memory_id, reason, textnorm.preview(row["content"]), row["type"], at, self.front
        )
        self.tombstones.put(row["canonical_hash"], memory_id, reason, at)
        self.memories.delete(memory_id)
        self.outbox.enqueue(memory_id, "delete", at)
        self.audit("forget", memory_id, at, reason=reason)

    def export_rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        return transfer.export_rows(self.conn, self.project)

    def import_rows(self, rows: list[tuple[int, str, dict[str, Any]]]) -> dict[str, int]:
        return transfer.import_rows(self.conn, self.project, rows)


class Store:
    """The SQLite record of truth: units of work per project, the search reads, the outbox."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.tokens = TokenVectors(db.path.with_name(TOKENS_DB))
        self.search = SearchQueries(db, self.tokens)
        self.queue = OutboxQueue(db, lambda project: self._committed(project, record=False))
        self.on_commit: list[Callable[[str, bool], None]] = []
        """Told (project, record) after every committed write: record=True for a unit of
        work on the project's record (memories, logs, conflicts), False when the indexer
        applied outbox rows to its vector copy. A cache of what reads return drops its
        entries here, so no write path can forget to."""

    @property
    def version(self) -> int:
        return self.db.version

    @property
    def path(self) -> Path:
        return self.db.path

    @contextmanager
    def write(self, project: str, front: str) -> Iterator[Tx]:
        """BEGIN IMMEDIATE ... COMMIT (re-entrant); any exception rolls everything back."""
        with self.db.transaction() as conn:
            self.db.after_commit(lambda: self._committed(project))  # dropped on rollback
            yield Tx(conn, project, front)

    @contextmanager
    def briefing_sessions(self, project: str) -> Iterator[BriefingSessions]:
        """What agent sessions were given (memory/context), in one write transaction. Nothing
        a read returns changes, so no cache is told."""
        with self.db.transaction() as conn:
            yield BriefingSessions(conn, project)

    @contextmanager
    def briefing_given(self, project: str) -> Iterator[BriefingSessions]:
        """What agent sessions were given, read in one snapshot (no write lock)."""
        with self.db.transaction(write=False) as conn:
            yield BriefingSessions(conn, project)

    def _committed(self, project: str, record: bool = True) -> None:
        for hook in list(self.on_commit):
            hook(project, record)

    @contextmanager
    def read(self, project: str, front: str = "") -> Iterator[Tx]:
        """One consistent snapshot, no write lock."""
        with self.db.transaction(write=False) as conn:
            yield Tx(conn, project, front)

    def after_commit(self, callback: Callable[[], None]) -> None:
        self.db.after_commit(callback)

    def close(self) -> None:
        self.tokens.close()
        self.db.close()
