"""Token vectors for late interaction: a derived copy, like the Chroma index, kept in its own
SQLite file beside the record (`tokens.sqlite3`), so the record stays small and the copy can be
deleted and rebuilt from it (`memls reindex`) at any time.

One row per memory: its content tokens' vectors as one blob (the model package's format:
`memls.models.late.pack`), read per query for the candidates only. Every statement binds the
project."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

TOKENS_DB = "tokens.sqlite3"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS token_vectors ("
    " project   TEXT NOT NULL,"
    " memory_id TEXT NOT NULL,"
    " model     TEXT NOT NULL,"
    " tokens    INTEGER NOT NULL,"
    " vectors   BLOB NOT NULL,"
    " PRIMARY KEY (project, memory_id))"
)


class TokenVectors:
    """The per-memory token vectors of every project, in one SQLite file (opened on first use)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.RLock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            fresh = not self.path.exists()
            conn = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=30.0
            )
            if fresh:
                os.chmod(self.path, 0o600)
            # A derived copy: a crash may lose the last writes (the outbox re-applies them or
            # doctor finds them missing), never corrupt the file.
            for pragma in (
                "PRAGMA journal_mode = WAL",
                "PRAGMA synchronous = NORMAL",
                "PRAGMA busy_timeout = 30000",
                # No memory map: mapped pages count in the daemon's RSS as queries touch them
                # (+45 MB after 150 queries at 10k memories) for ~0.35 ms a query saved.
                "PRAGMA mmap_size = 0",
            ):
                conn.execute(pragma)
            conn.execute(_SCHEMA)
            self._conn = conn
        return self._conn

    def put(self, project: str, model: str, rows: Iterable[tuple[str, int, bytes]]) -> None:
        """Write (memory id, token count, blob) rows, replacing what was there."""
        items = [
            {"project": project, "id": i, "model": model, "n": n, "blob": b} for i, n, b in rows
        ]
        if not items:
            return
        with self._lock:
            conn = self._db()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO token_vectors "
                    "(project, memory_id, model, tokens, vectors) "
                    "VALUES (:project, :id, :model, :n, :blob)",
                    items,
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def get(self, project: str, ids: Iterable[str], model: str) -> dict[str, bytes]:
        """The blobs of the memories among `ids` that have token vectors of `model`."""
        wanted = json.dumps(list(ids))
        with self._lock:
            rows = (
                self._db()
                .execute(
                    "SELECT t.memory_id, t.vectors FROM json_each(:ids) AS w "
                    "CROSS JOIN token_vectors t "
                    "ON t.project = :project AND t.memory_id = w.value AND t.model = :model",
                    {"ids": wanted, "project": project, "model": model},
                )
                .fetchall()
            )
        return {row[0]: row[1] for row in rows}

    def delete(self, project: str, ids: Iterable[str]) -> None:
        items = [{"project": project, "id": i} for i in ids]
        if not items:
            return
        with self._lock:
            self._db().executemany(
                "DELETE FROM token_vectors WHERE project = :project AND memory_id = :id", items
            )

    def clear(self, project: str) -> None:
        with self._lock:
            self._db().execute(
                "DELETE FROM token_vectors WHERE project = :project", {"project": project}
            )

    def ids(self, project: str, model: str) -> set[str]:
        """The memories of the project that have token vectors of `model`."""
        with self._lock:
            rows = (
                self._db()
                .execute(
                    "SELECT memory_id FROM token_vectors WHERE project = :project "
                    "AND model = :model",
                    {"project": project, "model": model},
                )
                .fetchall()
            )
        return {row[0] for row in rows}

    def count(self, project: str, model: str) -> int:
        """How many memories of the project have token vectors of `model`."""
        with self._lock:
            (n,) = (
                self._db()
                .execute(
                    "SELECT count(*) FROM token_vectors WHERE project = :project "
                    "AND model = :model",
                    {"project": project, "model": model},
                )
                .fetchone()
            )
        return int(n)

    def size(self) -> int:
        """Bytes on disk (the file and its WAL)."""
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
