"""What came in from another memory tool's store: the source's own id of every row imported
(an import is idempotent by it) and the tool each imported memory came from."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from memls.store.base import Repository


class Imported(Repository):
    table = "imported"

    def known(self, tool: str) -> dict[str, str]:
        """source key -> memory id, of every row of `tool` imported into the project."""
        rows = self._all(
            "SELECT source_key, memory_id FROM imported WHERE project = :project AND tool = :tool",
            tool=tool,
        )
        return {row["source_key"]: row["memory_id"] for row in rows}

    def add(self, tool: str, key: str, memory_id: str, outcome: str, at: str) -> None:
        self._exec(
            "INSERT INTO imported (project, tool, source_key, memory_id, outcome, at) "
            "VALUES (:project, :tool, :key, :memory_id, :outcome, :at)",
            tool=tool,
            key=key,
            memory_id=memory_id,
            outcome=outcome,
            at=at,
        )


def tools_of(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, str]:
    """memory id -> the tool it was imported from, for the memories among `ids` that an
    import stored."""
    rows = conn.execute(
        "SELECT i.memory_id, i.tool FROM json_each(?) AS w JOIN imported i "
        "ON i.memory_id = w.value AND i.outcome = 'stored'",
        (json.dumps(list(ids)),),
    ).fetchall()
    return {memory_id: tool for memory_id, tool in rows}
