"""The maintenance dead-letter queue (operations that failed, retried on the next run) and the
record of each run."""

from __future__ import annotations

import sqlite3

from memls.store.base import Repository

LETTER_FIELDS = (
    "operation",
    "memory_id",
    "project",
    "error",
    "attempts",
    "first_at",
    "last_at",
    "resolved_at",
)


class DeadLetters(Repository):
    table = "dead_letters"

    def open_ids(self) -> dict[str, str]:
        """memory id -> operation, for every unresolved letter."""
        return {
            row["memory_id"]: row["operation"]
            for row in self._all(
                "SELECT memory_id, operation FROM dead_letters WHERE project = :project "
                "AND resolved_at IS NULL ORDER BY seq"
            )
        }

    def open_letters(self) -> list[sqlite3.Row]:
        return self._all(
            f"SELECT {', '.join(LETTER_FIELDS)} FROM dead_letters "
            "WHERE project = :project AND resolved_at IS NULL ORDER BY seq"
        )

    def resolve(self, memory_id: str, at: str) -> None:
        self._exec(
            "UPDATE dead_letters SET resolved_at = :at WHERE memory_id = :id "
            "AND project = :project AND resolved_at IS NULL",
            id=memory_id,
            at=at,
        )

    def record_failure(self, operation: str, memory_id: str, error: str, at: str) -> None:
        self._exec(
            "INSERT INTO dead_letters (operation, memory_id, project, error, first_at, last_at) "
            "VALUES (:op, :id, :project, :error, :at, :at) ON CONFLICT (operation, memory_id) "
            "DO UPDATE SET attempts = attempts + 1, error = excluded.error, "
            "last_at = excluded.last_at, resolved_at = NULL",
            op=operation,
            id=memory_id,
            error=error,
            at=at,
        )

    def record_run(self, started_at: str, expired: int, failed: int) -> None:
        self._exec(
            "INSERT INTO maintenance_runs (project, started_at, expired, failed) "
            "VALUES (:project, :at, :expired, :failed)",
            at=started_at,
            expired=expired,
            failed=failed,
        )
