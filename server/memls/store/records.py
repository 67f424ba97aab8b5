"""Rows of the memories table and their wire form."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from memls import protocol

MEMORY_FIELDS = (
    "id", "project", "content", "type", "status", "trust", "valid_from", "valid_until",
    "recorded_at", "invalidated_at", "feedback_score", "content_hash", "canonical_hash",
    "source_uri", "source_range", "derived_from",
)
COLUMNS = "m.seq, " + ", ".join(f"m.{name}" for name in MEMORY_FIELDS)
"""Every memory field, plus `seq` (insertion order, for tie-breaks)."""


def among(ids: Iterable[str]) -> tuple[str, list[str]]:
    """FROM clause (alias m) and its argument for the memories with these ids, looked up id by
    id. CROSS JOIN fixes the loop order: with `m.id IN (...)` next to the project filters,
    SQLite scanned the project's validity index instead (10 ms for 100 ids at 10k memories;
    this way 0.3 ms)."""
    return ("json_each(?) AS wanted CROSS JOIN memories m ON m.id = wanted.value",
            [json.dumps(list(ids))])


def links(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, tuple[list[str], list[str]]]:
    """id -> (ids it supersedes, ids that supersede it); only edges whose two ends are in one
    project (the edge's)."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, tuple[list[str], list[str]]] = {i: ([], []) for i in wanted}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = conn.execute(
            f"SELECT e.src, e.dst FROM edges e JOIN memories a ON a.id = e.src "
            f"JOIN memories b ON b.id = e.dst WHERE e.kind = 'supersedes' "
            f"AND a.project = e.project AND b.project = e.project "
            f"AND (e.src IN ({marks}) OR e.dst IN ({marks})) ORDER BY e.created_at, e.src, e.dst",
            chunk + chunk,
        ).fetchall()
        for src, dst in rows:
            if src in found:
                found[src][0].append(dst)
            if dst in found:
                found[dst][1].append(src)
    return found


def to_memories(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> list[protocol.Memory]:
    linked = links(conn, (row["id"] for row in rows))
    return [
        protocol.Memory(
            **{name: row[name] for name in MEMORY_FIELDS},
            supersedes=linked[row["id"]][0],
            superseded_by=linked[row["id"]][1],
        )
        for row in rows
    ]


def to_hits(
    conn: sqlite3.Connection, rows: list[sqlite3.Row], scores: list[float]
) -> list[protocol.QueryHit]:
    memories = to_memories(conn, rows)
    return [
        protocol.QueryHit(**{f: getattr(m, f) for f in m.__struct_fields__}, score=score)
        for m, score in zip(memories, scores)
    ]


def fetch(conn: sqlite3.Connection, project: str, memory_id: str) -> sqlite3.Row | None:
    return conn.execute(
        f"SELECT {COLUMNS} FROM memories m WHERE m.id = ? AND m.project = ?",
        (memory_id, project),
    ).fetchone()
