"""A memory's tags (schema 15): the words another memory tool filed it under, kept in order,
gone with the memory (the rows cascade when it is forgotten)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from memls.store.base import Repository


class Tags(Repository):
    table = "memory_tags"

    def add(self, memory_id: str, tags: Iterable[str]) -> int:
        """Tag a memory of the project, after the tags it has; a tag it has is not added
        twice. How many were added."""
        added = 0
        for tag in dict.fromkeys(t.strip() for t in tags):
            if not tag:
                continue
            added += self._exec(
                "INSERT OR IGNORE INTO memory_tags (memory_id, project, tag, ordinal) "
                "SELECT :id, :project, :tag, coalesce(max(ordinal) + 1, 0) FROM memory_tags "
                "WHERE memory_id = :id",
                id=memory_id,
                tag=tag,
            ).rowcount
        return added


def tags_of(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, list[str]]:
    """memory id -> its tags in order, for the memories among `ids` that have any (ids are
    unique across projects, so the ids of a scoped read suffice)."""
    rows = conn.execute(
        "SELECT t.memory_id, t.tag FROM json_each(?) AS w JOIN memory_tags t "
        "ON t.memory_id = w.value ORDER BY t.memory_id, t.ordinal",
        (json.dumps(list(dict.fromkeys(ids))),),
    ).fetchall()
    out: dict[str, list[str]] = {}
    for memory_id, tag in rows:
        out.setdefault(memory_id, []).append(tag)
    return out
