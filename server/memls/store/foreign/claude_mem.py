"""claude-mem's store (npm `claude-mem`, `~/.claude-mem/claude-mem.db`), read-only.

claude-mem keeps what a model observed in Claude Code sessions: `observations` (a type, a
title, a subtitle, a narrative, facts, concepts, and the files read and modified) and one
`session_summaries` row a session (request, investigated, learned, completed, next steps).

Where scope lives in claude-mem: its `project` column holds a project's name, the basename of
the git repository's root (of the working folder outside a repository); its context reads the
rows whose `project` or `merged_into_project` (a worktree's rows adopted by their repository)
is that name. So a row is this project's when either names the project folder's basename; a
row of no project ("", or claude-mem's own "unknown-project" for a session with no working
folder) is unscoped; any other is another project's.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from memls.errors import InvalidInput
from memls.protocol.base import MemoryType
from memls.store.foreign import sqlite_source as src
from memls.store.foreign.records import ForeignCitation, ForeignMemory, ForeignStore

TOOL = "claude-mem"
#: the highest `schema_versions.version` of the claude-mem releases this reader knows
#: (13.15 writes 49, 13.25 writes 52); the columns it reads are the same in all of them
KNOWN_VERSIONS = (49, 50, 51, 52)
#: what a session with no working folder is filed under by claude-mem
NO_PROJECT = ("", "unknown-project")

#: claude-mem's observation types (its `code` mode, and the others it ships) with a memls
#: counterpart; the rest (feature, refactor, change, security_note, …) come in as notes
#: naming their type.
TYPES: dict[str, MemoryType] = {
    "decision": "decision",
    "discovery": "fact",
    "bugfix": "lesson",
    "security_alert": "lesson",
}

_OBSERVATION_COLUMNS = {
    "id",
    "memory_session_id",
    "project",
    "type",
    "title",
    "subtitle",
    "narrative",
    "facts",
    "concepts",
    "files_read",
    "files_modified",
    "created_at",
}
_SUMMARY_FIELDS = (
    ("request", "Request"),
    ("investigated", "Investigated"),
    ("completed", "Completed"),
    ("next_steps", "Next steps"),
    ("notes", "Notes"),
)


def _version(conn: sqlite3.Connection, path: Path) -> int:
    tables = src.tables(conn)
    if not {"observations", "session_summaries", "schema_versions"} <= tables:
        raise InvalidInput(
            f"{path} is not a claude-mem store (no observations, session_summaries and "
            "schema_versions tables)",
            field="source",
        )
    version = conn.execute("SELECT MAX(version) FROM schema_versions").fetchone()[0]
    known = ", ".join(str(v) for v in KNOWN_VERSIONS)
    if version not in KNOWN_VERSIONS or not _OBSERVATION_COLUMNS <= src.columns(
        conn, "observations"
    ):
        raise InvalidInput(
            f"{path}: claude-mem schema version {version} is not one memls reads (it knows "
            f"{known}: claude-mem 13.15 to 13.25)",
            field="source",
        )
    src.check_intact(conn, path)
    return int(version)


def _strings(raw: Any) -> list[str]:
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else []
    except ValueError:
        return []
    return (
        [str(v) for v in value if isinstance(v, str | int) and str(v).strip()]
        if isinstance(value, list)
        else []
    )


def _citations(project: Path, **roles: Any) -> tuple[ForeignCitation, ...]:
    """The files a row names that still exist in the project, each once (modified first)."""
    seen: dict[str, ForeignCitation] = {}
    for role, raw in roles.items():
        for name in _strings(raw):
            relative = src.inside(name, project)
            if relative is not None and relative not in seen:
                seen[relative] = ForeignCitation(path=relative, role=role)  # type: ignore[arg-type]
    return tuple(seen.values())


def _observation_text(row: sqlite3.Row) -> str:
    head = " — ".join(p.strip() for p in (row["title"], row["subtitle"]) if p and p.strip())
    parts = [head, (row["narrative"] or "").strip()]
    parts.append("\n".join(f"- {fact}" for fact in _strings(row["facts"])))
    if "text" in row.keys() and not any(parts):
        parts.append((row["text"] or "").strip())
    return "\n\n".join(p for p in parts if p)


def _observation(row: sqlite3.Row, project: Path) -> ForeignMemory | None:
    text = _observation_text(row)
    if not text:
        return None
    kind = (row["type"] or "").strip()
    created = src.utc(row["created_at"]) or src.utc(row["created_at_epoch"]) or ""
    return ForeignMemory(
        key=f"observation:{row['memory_session_id']}:{row['id']}",
        text=text,
        type=TYPES.get(kind, "note"),
        created_at=created,
        valid_from=created,
        tags=tuple(dict.fromkeys(_strings(row["concepts"]))),
        citations=_citations(project, modified=row["files_modified"], read=row["files_read"]),
        source_type=None if kind in TYPES else (kind or None),
    )


def _summaries(row: sqlite3.Row, project: Path) -> list[ForeignMemory]:
    """A session summary as a note (what was asked, looked into, done, left), and what it
    learned as a lesson of its own."""
    created = src.utc(row["created_at"]) or src.utc(row["created_at_epoch"]) or ""
    key = f"summary:{row['memory_session_id']}:{row['id']}"
    citations = _citations(project, modified=row["files_edited"], read=row["files_read"])
    lines = [
        f"{label}: {row[field].strip()}"
        for field, label in _SUMMARY_FIELDS
        if isinstance(row[field], str) and row[field].strip()
    ]
    out = []
    if lines:
        out.append(
            ForeignMemory(
                key=key,
                text="\n".join(lines),
                type="note",
                created_at=created,
                valid_from=created,
                citations=citations,
                source_type="session_summary",
            )
        )
    learned = (row["learned"] or "").strip()
    if learned:
        out.append(
            ForeignMemory(
                key=f"{key}:learned",
                text=learned,
                type="lesson",
                created_at=created,
                valid_from=created,
                citations=citations,
            )
        )
    return out


def read(source: Path, project: Path) -> ForeignStore:
    """The observations and session summaries of `project` in the claude-mem store at `source`
    (claude-mem.db or its folder), its rows of no project apart. InvalidInput for a file that is
    not a claude-mem store, a schema version this reader does not know, a locked or corrupt
    database."""
    path = src.locate(Path(source), "claude-mem.db", TOOL)
    try:
        conn = src.connect(path, TOOL)
        try:
            version = _version(conn, path)
            return _read(conn, path, version, Path(project))
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise src.problem(path, TOOL, exc) from None


def _scope(row: sqlite3.Row, name: str) -> str:
    merged = row["merged_into_project"] if "merged_into_project" in row.keys() else None
    if name in (row["project"], merged):
        return "mine"
    return "none" if (row["project"] or "") in NO_PROJECT and not merged else "other"


def _read(conn: sqlite3.Connection, path: Path, version: int, project: Path) -> ForeignStore:
    store = ForeignStore(tool="claude-mem", version=str(version), source=str(path))
    name = project.resolve().name
    rows: list[tuple[sqlite3.Row, list[ForeignMemory]]] = []
    for row in conn.execute("SELECT * FROM observations ORDER BY created_at_epoch, id"):
        memory = _observation(row, project)
        rows.append((row, [memory] if memory is not None else []))
    for row in conn.execute("SELECT * FROM session_summaries ORDER BY created_at_epoch, id"):
        rows.append((row, _summaries(row, project)))
    for row, memories in rows:
        scope = _scope(row, name)
        if scope == "mine":
            store.memories.extend(memories)
        elif scope == "none":
            store.unscoped.extend(memories)
        else:
            store.other_projects += len(memories)
    store.memories.sort(key=lambda m: m.created_at)
    store.unscoped.sort(key=lambda m: m.created_at)
    return store
