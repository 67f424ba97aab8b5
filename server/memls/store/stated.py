"""Where the memories of a read are stated (schema 13), for their wire records: every note
file that states each (`note_sources`) and the memories of other note files that say the same
in other words (`note_restates`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable


def _among(ids: Iterable[str]) -> str:
    return json.dumps(list(dict.fromkeys(ids)))


def sources_of(conn: sqlite3.Connection, ids: list[str]) -> dict[str, list[tuple[str, str]]]:
    """memory id -> (uri, source_range) of every note file that states it, its own
    source_uri first, then in the order they were found (memories no note states are left
    out)."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT s.memory_id, s.uri, s.source_range FROM json_each(?) AS w "
        "JOIN note_sources s ON s.memory_id = w.value JOIN memories m ON m.id = s.memory_id "
        "ORDER BY s.memory_id, s.uri <> coalesce(m.source_uri, ''), s.seq",
        (_among(ids),),
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for memory_id, uri, source_range in rows:
        out.setdefault(memory_id, []).append((uri, source_range))
    return out


def restates_of(conn: sqlite3.Connection, ids: list[str]) -> dict[str, list[str]]:
    """memory id -> the active memories of other note files that say the same in other words
    (either end of the link), in the order they were recorded."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT w.value, m.id FROM json_each(?) AS w "
        "JOIN note_restates r ON w.value IN (r.memory_id, r.restated_id) "
        "JOIN memories m ON m.id = CASE WHEN r.memory_id = w.value THEN r.restated_id "
        "ELSE r.memory_id END AND m.status = 'active' ORDER BY m.seq",
        (_among(ids),),
    ).fetchall()
    out: dict[str, list[str]] = {}
    for memory_id, other in rows:
        out.setdefault(memory_id, []).append(other)
    return out
