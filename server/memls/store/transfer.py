"""Rows of every table of one project, as export writes them and import inserts them back."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

from memls.errors import InvalidInput, Refused

# Parents before children (edges point at memories).
TABLES = (
    "memories",
    "citations",
    "memory_tags",
    "edges",
    "feedback",
    "trust_transitions",
    "forgetting_log",
    "tombstones",
    "audit",
    "dead_letters",
    "maintenance_runs",
    "conflict_dismissals",
    "imported",
)
# Columns that name a memory, per table: an imported row may name only this project's memories
# (or ids no other project uses), never another project's.
MEMORY_REFERENCES = {
    "memories": ("id", "derived_from"),
    "citations": ("memory_id",),
    "memory_tags": ("memory_id",),
    "edges": ("src", "dst"),
    "feedback": ("memory_id",),
    "trust_transitions": ("memory_id",),
    "forgetting_log": ("memory_id",),
    "tombstones": ("memory_id",),
    "audit": ("memory_id",),
    "dead_letters": ("memory_id",),
    "imported": ("memory_id",),
}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """The exported columns of a table (local sequence numbers are not exported)."""
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})") if row[1] != "seq"]


def defaulted(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns of a table that have a default value."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})") if row[4] is not None}


def export_rows(conn: sqlite3.Connection, project: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(table, row) for every row of the project, parents first, each table in its order."""
    for table in TABLES:
        names = columns(conn, table)
        has_seq = "seq" in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        for row in conn.execute(
            f"SELECT {', '.join(names)} FROM {table} WHERE project = ? "
            f"ORDER BY {'seq' if has_seq else 'rowid'}",
            (project,),
        ):
            yield table, dict(zip(names, row))


def import_rows(
    conn: sqlite3.Connection, project: str, rows: list[tuple[int, str, dict[str, Any]]]
) -> dict[str, int]:
    """Insert (line number, table, row) items into `project`, inside the caller's transaction
    (which the caller rolls back on any error: all or nothing). Every row must be of this
    project, of a known table with exactly its columns, and name no other project's memory."""
    counts = {table: 0 for table in TABLES}
    names = {table: columns(conn, table) for table in TABLES}
    optional = {table: defaulted(conn, table) for table in TABLES}
    for number, table, row in rows:
        if table not in TABLES:
            raise InvalidInput(f"line {number}: unknown table {table!r}", field="file")
        if row.get("project") != project:
            raise InvalidInput(
                f"line {number}: row of project {row.get('project')!r}, not {project!r}",
                field="file",
            )
        # a column a later schema added with a default may be absent (an older export)
        if not set(names[table]) - optional[table] <= set(row) <= set(names[table]):
            raise InvalidInput(
                f"line {number}: {table} rows have columns {', '.join(names[table])}", field="file"
            )
    _refuse_foreign(conn, project, rows)
    for number, table, row in rows:
        try:
            given = [name for name in names[table] if name in row]
            conn.execute(
                f"INSERT INTO {table} ({', '.join(given)}) "
                f"VALUES ({', '.join('?' for _ in given)})",
                [row[name] for name in given],
            )
        except sqlite3.IntegrityError as exc:
            raise Refused(
                f"line {number}: {table} row conflicts with the store ({exc})", field="file"
            ) from None
        counts[table] += 1
    stray = conn.execute(
        "SELECT e.src, e.dst FROM edges e WHERE e.project = ? AND EXISTS ("
        " SELECT 1 FROM memories m WHERE m.id IN (e.src, e.dst) AND m.project <> ?)",
        (project, project),
    ).fetchone()
    if stray is not None:
        raise InvalidInput(
            f"an edge {stray['src']} -> {stray['dst']} leaves project {project!r}", field="file"
        )
    return counts


def _refuse_foreign(
    conn: sqlite3.Connection, project: str, rows: list[tuple[int, str, dict[str, Any]]]
) -> None:
    """A memory id that another project uses anywhere (its memories, logs, tombstones, ...)
    must not enter this one: the two would then share rows keyed by that id (the forgetting
    log's unique key, say), and one project's import could break the other's next write."""
    named: dict[str, tuple[int, str]] = {}
    for number, table, row in rows:
        for column in MEMORY_REFERENCES.get(table, ()):
            if isinstance(row.get(column), str) and row[column]:
                named.setdefault(row[column], (number, f"{table}.{column}"))
    if not named:
        return
    wanted = json.dumps(list(named))
    for table, refs in MEMORY_REFERENCES.items():
        for ref in refs:
            hit = conn.execute(
                f"SELECT {ref} FROM {table} WHERE {ref} IN (SELECT value FROM json_each(?)) "
                "AND project <> ? LIMIT 1",
                (wanted, project),
            ).fetchone()
            if hit is not None:
                number, where = named[hit[0]]
                raise InvalidInput(
                    f"line {number}: {where} names memory {hit[0]}, which "
                    "belongs to another project",
                    field="file",
                )
