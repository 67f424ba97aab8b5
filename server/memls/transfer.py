"""Export and import: JSON Lines of every table row of one project, round-tripping exactly.

The first line is a header; each further line is {"table": NAME, "row": {column: value}}.
Local sequence numbers are not exported: rows keep their order instead.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from memls.errors import InvalidInput, Refused
from memls.index import outbox

if TYPE_CHECKING:
    from memls.engine import Engine

FORMAT = "memls-export"
FORMAT_VERSION = 1
# Parents before children (edges point at memories).
TABLES = (
    "memories", "edges", "feedback", "trust_transitions", "forgetting_log", "tombstones",
    "audit", "dead_letters", "maintenance_runs", "conflict_dismissals",
)


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})") if row[1] != "seq"]


def export(engine: Engine, project: str) -> Iterator[dict[str, Any]]:
    with engine.db.transaction(write=False) as conn:
        lines: list[dict[str, Any]] = [{
            "format": FORMAT, "version": FORMAT_VERSION, "schemaVersion": engine.db.version,
            "project": project,
        }]
        for table in TABLES:
            columns = _columns(conn, table)
            order = "seq" if "seq" in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")} \
                else "rowid"
            for row in conn.execute(
                f"SELECT {', '.join(columns)} FROM {table} WHERE project = ? ORDER BY {order}",
                (project,),
            ):
                lines.append({"table": table, "row": dict(zip(columns, row))})
    return iter(lines)


def import_lines(engine: Engine, project: str, lines: Iterable[str]) -> dict[str, int]:
    """Insert every row of an export into this project, all or nothing."""
    parsed: list[tuple[int, str, dict[str, Any]]] = []
    header = None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {number}: not JSON ({exc.msg})", field="file") from None
        if header is None:
            if not isinstance(item, dict) or item.get("format") != FORMAT:
                raise InvalidInput(f"line {number}: not a memls export header", field="file")
            if item.get("version") != FORMAT_VERSION:
                raise InvalidInput(
                    f"line {number}: export format {item.get('version')} is not supported",
                    field="file",
                )
            header = item
            continue
        if (
            not isinstance(item, dict) or item.get("table") not in TABLES
            or not isinstance(item.get("row"), dict)
        ):
            raise InvalidInput(f"line {number}: expected {{table, row}}", field="file")
        if item["row"].get("project") != project:
            raise InvalidInput(
                f"line {number}: row of project {item['row'].get('project')!r}, not {project!r}",
                field="file",
            )
        parsed.append((number, item["table"], item["row"]))
    if header is None:
        raise InvalidInput("the file is empty", field="file")
    counts = {table: 0 for table in TABLES}
    now = engine.clock()
    with engine.db.transaction() as conn:
        columns = {table: _columns(conn, table) for table in TABLES}
        for number, table, row in parsed:
            if sorted(row) != sorted(columns[table]):
                raise InvalidInput(
                    f"line {number}: {table} rows have columns {', '.join(columns[table])}",
                    field="file",
                )
            names = columns[table]
            try:
                conn.execute(
                    f"INSERT INTO {table} ({', '.join(names)}) "
                    f"VALUES ({', '.join('?' for _ in names)})",
                    [row[name] for name in names],
                )
            except sqlite3.IntegrityError as exc:
                raise Refused(f"line {number}: {table} row conflicts with the store ({exc})",
                              field="file") from None
            counts[table] += 1
            if table == "memories":
                outbox.enqueue(conn, project, row["id"], "index", now)
        # every reference must stay inside the project (an edge or log row naming another
        # project's memory would leak its id into this one)
        stray = conn.execute(
            "SELECT e.src, e.dst FROM edges e WHERE e.project = ? AND EXISTS ("
            " SELECT 1 FROM memories m WHERE m.id IN (e.src, e.dst) AND m.project <> ?)",
            (project, project),
        ).fetchone()
        if stray is not None:
            raise InvalidInput(f"an edge {stray['src']} -> {stray['dst']} leaves project "
                               f"{project!r}", field="file")
        engine._audit(conn, project, "import", None, now,
                      **{k: v for k, v in counts.items() if v})
    return counts
