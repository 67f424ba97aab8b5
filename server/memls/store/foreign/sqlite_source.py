"""Opening another tool's SQLite store read-only, and what its readers share: the errors a bad
source gets (one line, field "source"), times in memls's UTC form, paths inside the project."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from memls.errors import InvalidInput

_HEADER = b"SQLite format 3\x00"


def _a(tool: str) -> str:
    """The tool's name with its article: "a claude-mem", "an OMEGA"."""
    return ("an " if tool[:1].lower() in "aeiou" else "a ") + tool


def locate(source: Path, filename: str, tool: str) -> Path:
    """The database file: `source` itself, or `filename` in a folder (the tool's home)."""
    path = source / filename if source.is_dir() else source
    if not path.is_file():
        raise InvalidInput(f"{path}: no such file ({_a(tool)} store is {filename})", field="source")
    return path


def connect(path: Path, tool: str) -> sqlite3.Connection:
    """A read-only connection that writes nothing at all: not the store, and no -wal or -shm
    beside a WAL store its tool has closed (opened immutable then). While a -wal is there (the
    tool open, or a write left unfinished) the store is read through it, as the tool's own
    readers do."""
    try:
        with path.open("rb") as handle:
            header = handle.read(20)
    except OSError as exc:
        raise InvalidInput(f"{path} cannot be read: {exc.strerror}", field="source") from None
    if header[:16] != _HEADER:
        raise InvalidInput(
            f"{path} is not {_a(tool)} store (not a SQLite database)", field="source"
        )
    wal = header[18:20] == b"\x02\x02"
    live = path.with_name(path.name + "-wal").exists()
    flags = "mode=ro&immutable=1" if wal and not live else "mode=ro"
    conn = sqlite3.connect(f"{path.as_uri()}?{flags}", uri=True, timeout=1.0)
    conn.row_factory = sqlite3.Row
    return conn


def problem(path: Path, tool: str, exc: sqlite3.Error) -> InvalidInput:
    """The one-line error for a store SQLite refused to read."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return InvalidInput(
            f"{path} is locked by another process ({tool} writing?): try again when it is done",
            field="source",
        )
    if "malformed" in text or "not a database" in text:
        return InvalidInput(f"{path} is corrupt: {text}", field="source")
    return InvalidInput(f"{path} cannot be read as {_a(tool)} store: {text}", field="source")


def tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def check_intact(conn: sqlite3.Connection, path: Path) -> None:
    """InvalidInput when SQLite finds the store damaged."""
    row = conn.execute("PRAGMA quick_check").fetchone()
    if row is None or row[0] != "ok":
        raise InvalidInput(f"{path} is corrupt: {row[0] if row else 'no answer'}", field="source")


def utc(value: object, *, naive_is_local: bool = False) -> str | None:
    """An ISO 8601 text (or epoch milliseconds) as memls's UTC form
    ('YYYY-MM-DDTHH:MM:SS.ffffffZ'); None if absent or unreadable. A time without a zone is
    UTC, or local time where the tool wrote local time (`naive_is_local`)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        moment = datetime.fromtimestamp(value / 1000, tz=UTC)
    elif isinstance(value, str) and value.strip():
        try:
            moment = datetime.fromisoformat(value.strip().replace(" ", "T", 1))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.astimezone() if naive_is_local else moment.replace(tzinfo=UTC)
    else:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def inside(path: str | Path, project: Path) -> str | None:
    """`path` (absolute, or relative to the project) relative to the project folder, in POSIX
    form, when it is an existing file inside it; None otherwise."""
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = project / candidate
    try:
        real = Path(os.path.realpath(candidate))
        relative = real.relative_to(Path(os.path.realpath(project)))
    except ValueError:
        return None
    return relative.as_posix() if real.is_file() else None


def same_or_within(folder: str, project: Path) -> bool:
    """Whether `folder` is the project folder or a folder inside it."""
    if not folder or not os.path.isabs(folder):
        return False
    real, root = Path(os.path.realpath(folder)), Path(os.path.realpath(project))
    return real == root or root in real.parents
