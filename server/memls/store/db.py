"""Opening the SQLite file: pragmas, numbered migrations, transactions."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

from memls.errors import StoreError

DB_NAME = "memls.sqlite3"


def migrations() -> list[tuple[int, str]]:
    """(version, sql) for every numbered file in store/migrations, in order."""
    found = []
    for entry in resources.files("memls.store").joinpath("migrations").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:4].isdigit():
            found.append((int(name[:4]), entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _ in found]
    if versions != list(range(1, len(versions) + 1)):
        raise StoreError(f"migrations are not numbered 1..n: {versions}")
    return found


LATEST = len(migrations())


class Database:
    """One SQLite connection shared by the owning process, with serialised writes."""

    def __init__(self, path: Path, *, target_version: int | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.exists()
        self.conn = sqlite3.connect(
            str(path), isolation_level=None, check_same_thread=False, timeout=30.0
        )
        if fresh:
            os.chmod(path, 0o600)
        self.conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        for pragma in (
            "PRAGMA journal_mode = WAL",
            "PRAGMA synchronous = FULL",
            "PRAGMA foreign_keys = ON",
            "PRAGMA busy_timeout = 30000",
        ):
            self.conn.execute(pragma)
        self.version = self._migrate(LATEST if target_version is None else target_version)

    def _migrate(self, target: int) -> int:
        current = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if current > LATEST:
            raise StoreError(
                f"{self.path} has schema version {current}, newer than this memls supports "
                f"({LATEST}); upgrade memls to open it"
            )
        for version, sql in migrations():
            if current < version <= target:
                with self.transaction():
                    # executescript would commit on its own; run statement by statement.
                    for statement in _statements(sql):
                        self.conn.execute(statement)
                    self.conn.execute(f"PRAGMA user_version = {version}")
                current = version
        return current

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT; any exception rolls everything back. Re-entrant.

        write=False opens a deferred (read) transaction: one consistent snapshot, no write lock.
        Callbacks registered with `after_commit` inside run after the outermost COMMIT, once
        the lock is released; a rollback drops them.
        """
        committed: list[Callable[[], None]] = []
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")
                committed = self._after_commit
            finally:
                self._depth = 0
                self._after_commit = []
        for callback in committed:
            callback()

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` when the transaction in progress commits (never if it rolls back);
        at once when none is in progress."""
        with self._lock:
            if self._depth:
                self._after_commit.append(callback)
                return
        callback()

    def read(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self.conn.close()


def _statements(script: str) -> Iterator[str]:
    """Split a migration into complete statements (triggers contain semicolons)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--") and not buffer.strip():
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statement = buffer.strip()
            if statement:
                yield statement
            buffer = ""
    if buffer.strip():
        raise StoreError(f"incomplete statement in a migration: {buffer.strip()[:60]}")
