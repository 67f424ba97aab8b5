"""OMEGA's store (PyPI `omega-memory`, `~/.omega/omega.db`), read-only.

Where scope lives in OMEGA: its queries filter by the project in a memory's metadata
(`metadata.project`; none, or "", is its global escape: visible from every project). The
`project` column is not it: a memory stored without a project gets OMEGA's working directory
there. So a row is this project's when its metadata names this project, unscoped when its
metadata names none, and another project's otherwise.

OMEGA's `forgetting_log` has no project, and some of its rows name memories that still exist
(a supersession, a feedback flag: those come in with the memory itself). A row is a deletion
of this project only when the memory is gone and a memory of this project still names it
(its successor, a contradiction, an edge); the others are counted, not imported.
"""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memls.errors import InvalidInput
from memls.protocol.base import ForgetReason, MemoryType
from memls.store.foreign import sqlite_source as src
from memls.store.foreign.records import (
    ForeignEdge,
    ForeignForgetting,
    ForeignMemory,
    ForeignStore,
)

#: OMEGA's `schema_version` values this reader knows (omega-memory 1.5.x writes 16).
KNOWN_VERSIONS = (16,)

#: OMEGA event types with a memls counterpart; the rest come in as notes naming their type.
TYPES: dict[str, MemoryType] = {
    "decision": "decision",
    "constraint": "constraint",
    "user_preference": "preference",
    "preference": "preference",
    "lesson_learned": "lesson",
    "error_pattern": "lesson",
    "reflexion": "lesson",
    "self_reflection": "lesson",
    "fact": "fact",
    "user_fact": "fact",
    "convention": "convention",
    "coding_convention": "convention",
    "note": "note",
    "memory": "note",
}

#: OMEGA's forgetting reasons -> memls's vocabulary. The supersession and flag reasons name
#: memories OMEGA keeps (they arrive with the memory); unknown reasons are not imported.
REASONS: dict[str, ForgetReason] = {
    "user_deleted": "user_deleted",
    "ttl_expired": "ttl_expired",
    "lru_evicted": "decay",
    "strength_decay": "decay",
    "consolidation_pruned": "decay",
    "consolidation_phase0_pruned": "decay",
    "feedback_flagged": "feedback_flagged",
    "ingest_superseded": "superseded",
    "manual_superseded": "superseded",
    "compaction_superseded": "superseded",
    "insight_synthesis_superseded": "superseded",
}

_EDGE_KINDS = {"supersedes": "supersedes", "contradicts": "contradicts", "related": "relates"}


def locate(source: Path) -> Path:
    """The database file: `source` itself, or `omega.db` in a folder (OMEGA's home)."""
    return src.locate(source, "omega.db", "OMEGA")


def _version(conn: sqlite3.Connection, path: Path) -> int:
    tables = src.tables(conn)
    if not {"memories", "schema_version"} <= tables:
        raise InvalidInput(
            f"{path} is not an OMEGA store (no memories and schema_version tables)",
            field="source",
        )
    row = conn.execute("SELECT version FROM schema_version LIMIT 1").fetchone()
    version = row[0] if row is not None else None
    if version not in KNOWN_VERSIONS:
        known = ", ".join(str(v) for v in KNOWN_VERSIONS)
        raise InvalidInput(
            f"{path}: OMEGA schema version {version} is not one memls reads (it knows {known}: "
            "omega-memory 1.5)",
            field="source",
        )
    check = conn.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        raise InvalidInput(
            f"{path} is corrupt: {check[0] if check else 'no answer'}", field="source"
        )
    return int(version)


def _meta(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _ts(value: Any) -> str | None:
    """OMEGA's ISO text as memls's UTC form ('YYYY-MM-DDTHH:MM:SS.ffffffZ'); None if absent."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace(" ", "T", 1))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _same_folder(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b) or os.path.realpath(a) == os.path.realpath(b)


def _memory(row: sqlite3.Row, meta: dict[str, Any], edges: list[ForeignEdge]) -> ForeignMemory:
    event_type = row["event_type"] or meta.get("event_type") or ""
    created = _ts(row["created_at"]) or _ts(meta.get("created_at")) or ""
    superseded = row["status"] == "superseded" or bool(meta.get("superseded"))
    successor = meta.get("superseded_by")
    tags = meta.get("tags")
    score = meta.get("feedback_score", 0)
    return ForeignMemory(
        key=row["node_id"],
        text=row["content"],
        type=TYPES.get(event_type, "note"),
        created_at=created,
        valid_from=_ts(row["valid_from"]) or created,
        valid_until=_ts(row["valid_until"])
        or (_ts(meta.get("superseded_at")) if superseded else None),
        status="superseded" if superseded else "active",
        superseded_by=successor
        if isinstance(successor, str) and successor.startswith("mem-")
        else None,
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        feedback_score=score if isinstance(score, int) else 0,
        flagged=bool(meta.get("flagged_for_review")),
        edges=tuple(edges),
        source_type=None if event_type in TYPES else (event_type or None),
    )


def _names(meta: dict[str, Any]) -> set[str]:
    """The other memories a memory's metadata names (successor, contradictions)."""
    named = {meta.get("superseded_by")}
    for field in ("contradicts", "contradicted_by"):
        for item in meta.get(field) or ():
            if isinstance(item, dict):
                named.add(item.get("node_id"))
    return {n for n in named if isinstance(n, str)}


def read(source: Path, project: Path) -> ForeignStore:
    """The memories of `project` in the OMEGA store at `source` (omega.db or its folder), its
    unscoped rows apart, and the deletions tied to the project. InvalidInput for a file that
    is not an OMEGA store, a schema version this reader does not know, a locked or corrupt
    database."""
    path = locate(Path(source))
    target = str(project)
    try:
        conn = src.connect(path, "OMEGA")
        try:
            version = _version(conn, path)
            return _read(conn, path, version, target)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise src.problem(path, "OMEGA", exc) from None


def _read(conn: sqlite3.Connection, path: Path, version: int, target: str) -> ForeignStore:
    tables = src.tables(conn)
    edges: dict[str, list[ForeignEdge]] = {}
    linked: dict[str, set[str]] = {}
    if "edges" in tables:
        for e in conn.execute("SELECT source_id, target_id, edge_type FROM edges ORDER BY id"):
            linked.setdefault(e["source_id"], set()).add(e["target_id"])
            linked.setdefault(e["target_id"], set()).add(e["source_id"])
            kind = _EDGE_KINDS.get(e["edge_type"])
            if kind is not None:
                edges.setdefault(e["source_id"], []).append(
                    ForeignEdge(kind=kind, target=e["target_id"], label=e["edge_type"])  # type: ignore[arg-type]
                )
    store = ForeignStore(tool="omega", version=str(version), source=str(path))
    named: set[str] = set()
    alive: set[str] = set()
    rows = conn.execute(
        "SELECT node_id, content, metadata, created_at, event_type, valid_from, valid_until, "
        "status FROM memories ORDER BY created_at, id"
    )
    for row in rows:
        alive.add(row["node_id"])
        if not (row["content"] or "").strip():
            continue
        meta = _meta(row["metadata"])
        scope = meta.get("project")
        memory = _memory(row, meta, edges.get(row["node_id"], []))
        if scope is None or scope == "":
            store.unscoped.append(memory)
        elif isinstance(scope, str) and _same_folder(scope, target):
            store.memories.append(memory)
            named |= _names(meta) | linked.get(memory.key, set())
        else:
            store.other_projects += 1
    if "forgetting_log" in tables:
        gone: dict[str, ForeignForgetting] = {}
        log = conn.execute(
            "SELECT node_id, content_preview, reason, deleted_at FROM forgetting_log ORDER BY id"
        )
        for entry in log:
            reason = REASONS.get(entry["reason"])
            if reason is None or entry["node_id"] in alive or entry["node_id"] not in named:
                store.forgetting_skipped += 1
                continue
            store.forgetting_skipped += entry["node_id"] in gone  # the later row says it all
            gone[entry["node_id"]] = ForeignForgetting(
                key=entry["node_id"],
                reason=reason,
                source_reason=entry["reason"],
                forgotten_at=_ts(entry["deleted_at"]) or "",
                text=entry["content_preview"] or None,
            )
        store.forgotten = list(gone.values())
    return store
