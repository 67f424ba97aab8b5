"""What every repository shares: one connection (inside the caller's transaction) and one
project, which `_exec` binds to every statement — the project filter lives here only."""

from __future__ import annotations

import sqlite3
from typing import Any


class Repository:
    """Rows of one table group, of one project, on one connection.

    Statements name the project as `:project` (named parameters throughout); `_exec` binds it
    from the repository, so no statement can be run for another project or for none."""

    table = ""

    def __init__(self, conn: sqlite3.Connection, project: str) -> None:
        if not project:
            raise ValueError("a repository needs a project")
        self.conn = conn
        self.project = project

    def _exec(self, sql: str, **args: Any) -> sqlite3.Cursor:
        if ":project" not in sql:
            raise ValueError(f"statement without the project filter: {sql[:60]}")
        return self.conn.execute(sql, {**args, "project": self.project})

    def _one(self, sql: str, **args: Any) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._exec(sql, **args).fetchone()
        return row

    def _all(self, sql: str, **args: Any) -> list[sqlite3.Row]:
        return self._exec(sql, **args).fetchall()

    def count(self, extra: str = "") -> int:
        """Rows of this table in the project (`extra`: more conditions, AND ...)."""
        row = self._one(f"SELECT count(*) FROM {self.table} WHERE project = :project {extra}")
        return int(row[0]) if row else 0
