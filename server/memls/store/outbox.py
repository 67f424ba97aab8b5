"""The outbox: every change to a memory writes a row in the same SQLite transaction; the
indexer applies the rows to the vector index and deletes them. A crash between the two leaves
the row, and the next drain (start-up included) applies it again."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable

from memls.store.base import Repository
from memls.store.db import Database


class Outbox(Repository):
    """One project's rows, inside the writer's transaction."""

    table = "outbox"

    def enqueue(self, memory_id: str, op: str, at: str) -> None:
        self._exec(
            "INSERT INTO outbox (project, memory_id, op, created_at) "
            "VALUES (:project, :id, :op, :at)",
            id=memory_id,
            op=op,
            at=at,
        )

    def enqueue_all(self, at: str) -> int:
        """Queue every memory of the project for (re)indexing."""
        return self._exec(
            "INSERT INTO outbox (project, memory_id, op, created_at) "
            "SELECT project, id, 'index', :at FROM memories WHERE project = :project "
            "ORDER BY seq",
            at=at,
        ).rowcount

    def clear(self) -> None:
        self._exec("DELETE FROM outbox WHERE project = :project")

    def pending_ids(self) -> set[str]:
        return {
            row["memory_id"]
            for row in self._all("SELECT memory_id FROM outbox WHERE project = :project")
        }


class OutboxQueue:
    """The whole queue, as the indexer drains it (every project, in order)."""

    def __init__(self, db: Database, applied: Callable[[str], None] | None = None) -> None:
        self.db = db
        self.applied = applied  # told each project whose rows were applied (after commit)

    def pending(self, project: str | None = None) -> int:
        if project is None:
            return int(self.db.read("SELECT count(*) FROM outbox")[0][0])
        return int(self.db.read("SELECT count(*) FROM outbox WHERE project = ?", (project,))[0][0])

    def next_batch(self, size: int, after: int | None = None) -> list[sqlite3.Row]:
        """The first `size` rows (after the row `after`: the batch behind the one in hand)."""
        return self.db.read(
            "SELECT seq, project, memory_id, op FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?",
            (-1 if after is None else after, size),
        )

    def _tell_applied(self, conn: sqlite3.Connection, seqs: list[int]) -> None:
        """The vector copy of these rows' projects changed (or may have, on a failure)."""
        if self.applied is None or not seqs:
            return
        marks = ", ".join("?" for _ in seqs)
        projects = {
            row[0]
            for row in conn.execute(
                f"SELECT DISTINCT project FROM outbox WHERE seq IN ({marks})", seqs
            )
        }
        tell = self.applied
        for project in projects:
            self.db.after_commit(functools.partial(tell, project))

    def failed(self, seqs: list[int], error: str) -> None:
        with self.db.transaction() as conn:
            self._tell_applied(conn, seqs)
            conn.executemany(
                "UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE seq = ?",
                [(error[:500], s) for s in seqs],
            )

    def done(self, seqs: list[int]) -> None:
        with self.db.transaction() as conn:
            self._tell_applied(conn, seqs)
            conn.executemany("DELETE FROM outbox WHERE seq = ?", [(s,) for s in seqs])
