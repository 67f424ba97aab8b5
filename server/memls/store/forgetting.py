"""The forgetting log (what was removed, why, when, by whom) and tombstones (forgotten content,
by canonical hash, consulted on every write)."""

from __future__ import annotations

import sqlite3

from memls.store.base import Repository

ENTRY_FIELDS = "memory_id, project, reason, preview, type, at, front"


class Forgetting(Repository):
    table = "forgetting_log"

    def log(
        self, memory_id: str, reason: str, preview: str, type_: str, at: str, front: str
    ) -> None:
        self._exec(
            "INSERT INTO forgetting_log (memory_id, project, reason, preview, type, at, front) "
            "VALUES (:id, :project, :reason, :preview, :type, :at, :front)",
            id=memory_id,
            reason=reason,
            preview=preview,
            type=type_,
            at=at,
            front=front,
        )

    def previews(self) -> list[sqlite3.Row]:
        """(seq, memory_id, preview) of every entry of the project (doctor's secrets check)."""
        return self._all(
            "SELECT seq, memory_id, preview FROM forgetting_log WHERE project = :project "
            "ORDER BY seq"
        )

    def set_preview(self, seq: int, preview: str) -> None:
        """Replace an entry's preview (a secret an older version kept in it, redacted)."""
        self._exec(
            "UPDATE forgetting_log SET preview = :preview WHERE seq = :seq AND project = :project",
            seq=seq,
            preview=preview,
        )

    def last(self, memory_id: str) -> sqlite3.Row | None:
        """The latest log entry of a memory id in this project."""
        return self._one(
            "SELECT reason, at FROM forgetting_log WHERE memory_id = :id "
            "AND project = :project ORDER BY seq DESC LIMIT 1",
            id=memory_id,
        )

    def entries(self, reason: str | None, limit: int) -> list[sqlite3.Row]:
        return self._all(
            f"SELECT {ENTRY_FIELDS} FROM forgetting_log WHERE project = :project "
            + ("AND reason = :reason " if reason is not None else "")
            + "ORDER BY seq DESC LIMIT :limit",
            reason=reason,
            limit=limit,
        )


class Tombstones(Repository):
    table = "tombstones"

    def find(self, canonical: str) -> sqlite3.Row | None:
        return self._one(
            "SELECT memory_id, reason, at FROM tombstones WHERE project = :project "
            "AND canonical_hash = :hash",
            hash=canonical,
        )

    def put(self, canonical: str, memory_id: str, reason: str, at: str) -> None:
        self._exec(
            "INSERT INTO tombstones (project, canonical_hash, memory_id, reason, at) "
            "VALUES (:project, :hash, :id, :reason, :at) ON CONFLICT (project, canonical_hash) "
            "DO UPDATE SET memory_id = excluded.memory_id, reason = excluded.reason, "
            "at = excluded.at",
            hash=canonical,
            id=memory_id,
            reason=reason,
            at=at,
        )

    def clear(self, canonical: str) -> None:
        self._exec(
            "DELETE FROM tombstones WHERE project = :project AND canonical_hash = :hash",
            hash=canonical,
        )
