"""The append-only audit log: every mutation, its time and the front that made it."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from memls.store.base import Repository


class Audit(Repository):
    table = "audit"

    def add(self, op: str, memory_id: str | None, at: str, front: str, **detail: Any) -> None:
        self._exec(
            "INSERT INTO audit (at, project, memory_id, op, front, detail) "
            "VALUES (:at, :project, :id, :op, :front, :detail)",
            at=at,
            id=memory_id,
            op=op,
            front=front,
            detail=json.dumps(detail) if detail else None,
        )

    def entries(self, memory_id: str | None, limit: int) -> list[sqlite3.Row]:
        return self._all(
            "SELECT seq, at, project, memory_id, op, front, detail FROM audit "
            "WHERE project = :project "
            + ("AND memory_id = :id " if memory_id else "")
            + "ORDER BY seq DESC LIMIT :limit",
            id=memory_id,
            limit=limit,
        )
