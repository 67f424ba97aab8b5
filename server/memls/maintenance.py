"""Maintenance passes: expiry by valid_until and per-type TTL, with a dead-letter queue.

Each memory is expired in a transaction of its own. One that fails is written to
`dead_letters` (operation, memory, error, attempts, times) and retried on the next run; it is
never dropped silently.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from memls import protocol, timeutil
from memls.store import records

if TYPE_CHECKING:
    from memls.engine import Engine

_LETTER_FIELDS = (
    "operation", "memory_id", "project", "error", "attempts", "first_at", "last_at",
    "resolved_at",
)


def _due(engine: Engine, project: str, now: str) -> dict[str, str]:
    """memory id -> operation, for every active memory of the project whose time is up."""
    due: dict[str, str] = {}
    for row in engine.db.read(
        "SELECT id FROM memories WHERE project = ? AND status = 'active' "
        "AND valid_until IS NOT NULL AND valid_until <= ? ORDER BY seq",
        (project, now),
    ):
        due[row["id"]] = "expire_valid_until"
    moment = datetime.fromisoformat(now.replace("Z", "+00:00"))
    for type_name, days in sorted(engine.settings.ttl_days.items()):
        cutoff = timeutil.format_ts(moment - timedelta(days=days))
        for row in engine.db.read(
            "SELECT id FROM memories WHERE project = ? AND status = 'active' AND type = ? "
            "AND valid_from <= ? ORDER BY seq",
            (project, type_name, cutoff),
        ):
            due.setdefault(row["id"], "expire_ttl")
    return due


def run(engine: Engine, project: str) -> protocol.MaintainResult:
    now = engine.clock()
    due = _due(engine, project, now)
    retry = {
        row["memory_id"]: row["operation"]
        for row in engine.db.read(
            "SELECT memory_id, operation FROM dead_letters WHERE project = ? "
            "AND resolved_at IS NULL ORDER BY seq",
            (project,),
        )
    }
    expired: list[str] = []
    failed = 0
    for memory_id, operation in {**retry, **due}.items():
        try:
            with engine.db.transaction() as conn:
                row = records.fetch(conn, project, memory_id)
                if row is not None:
                    engine._forget_row(conn, row, "ttl_expired", now)
                    expired.append(memory_id)
                conn.execute(
                    "UPDATE dead_letters SET resolved_at = ? WHERE memory_id = ? "
                    "AND project = ? AND resolved_at IS NULL",
                    (now, memory_id, project),
                )
        except Exception as exc:  # recorded, retried next run: never dropped
            failed += 1
            with engine.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO dead_letters (operation, memory_id, project, error, first_at, "
                    "last_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (operation, memory_id) DO "
                    "UPDATE SET attempts = attempts + 1, error = excluded.error, "
                    "last_at = excluded.last_at, resolved_at = NULL",
                    (operation, memory_id, project, f"{type(exc).__name__}: {exc}", now, now),
                )
    with engine.db.transaction() as conn:
        conn.execute(
            "INSERT INTO maintenance_runs (project, started_at, expired, failed) "
            "VALUES (?, ?, ?, ?)",
            (project, now, len(expired), failed),
        )
    return protocol.MaintainResult(
        project=project, expired=expired, retried=len(retry),
        failed=open_letters(engine, project),
    )


def open_letters(engine: Engine, project: str) -> list[protocol.DeadLetter]:
    rows = engine.db.read(
        f"SELECT {', '.join(_LETTER_FIELDS)} FROM dead_letters WHERE project = ? "
        "AND resolved_at IS NULL ORDER BY seq",
        (project,),
    )
    return [protocol.DeadLetter(**dict(row)) for row in rows]
