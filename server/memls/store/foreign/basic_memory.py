"""basic-memory's store (PyPI `basic-memory`, `~/.basic-memory/memory.db`), read-only.

basic-memory's notes are markdown files; its SQLite index holds what it parsed from them: one
`entity` a note (its file path relative to its project's folder), one `observation` a
`- [category] text #tag (context)` line, one `relation` a `- type [[Other note]]` line. Its
`project` table names each project and its folder (`basic-memory project add NAME PATH`, kept
in config.json's project list too).

Scope: a project is the importing project's when its folder is the project folder or a folder
inside it (or, given `name`, when that is its name); every other project's rows are counted,
never read. basic-memory has no rows of no project.

Each observation is a memory; a note with no observation is one memory of its text. A
relation becomes an edge from each memory of its note to the other note's first memory.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from memls.errors import InvalidInput
from memls.protocol.base import MEMORY_TYPES, MemoryType
from memls.store.foreign import sqlite_source as src
from memls.store.foreign.records import ForeignCitation, ForeignEdge, ForeignMemory, ForeignStore

TOOL = "basic-memory"
#: basic-memory's alembic revisions (`alembic_version`) this reader knows: 0042 is the head of
#: basic-memory 0.24
KNOWN_VERSIONS = ("0042",)
_MARKDOWN = "text/markdown"
_FRONT_MATTER = re.compile(r"\A---\r?\n.*?\r?\n---[ \t]*\r?\n", re.DOTALL)


def _version(conn: sqlite3.Connection, path: Path) -> str:
    tables = src.tables(conn)
    if not {"project", "entity", "observation", "relation", "alembic_version"} <= tables:
        raise InvalidInput(
            f"{path} is not a basic-memory store (no project, entity, observation, relation and "
            "alembic_version tables)",
            field="source",
        )
    row = conn.execute("SELECT version_num FROM alembic_version LIMIT 1").fetchone()
    version = row[0] if row is not None else None
    if version not in KNOWN_VERSIONS:
        known = ", ".join(KNOWN_VERSIONS)
        raise InvalidInput(
            f"{path}: basic-memory schema version {version} is not one memls reads (it knows "
            f"{known}: basic-memory 0.24)",
            field="source",
        )
    src.check_intact(conn, path)
    return str(version)


def _tags(raw: Any) -> tuple[str, ...]:
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else []
    except ValueError:
        return ()
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(str(t).strip() for t in value if str(t).strip()))


def _note_tags(raw: Any) -> tuple[str, ...]:
    """The tags of a note's front matter (a list, or one comma-separated text)."""
    try:
        meta = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return ()
    tags = meta.get("tags") if isinstance(meta, dict) else None
    if isinstance(tags, str):
        tags = tags.split(",")
    return _tags(json.dumps(tags)) if isinstance(tags, list) else ()


def _kind(name: str | None) -> tuple[MemoryType, str | None]:
    """memls's type for a category or note type, and the source's name when it has none."""
    name = (name or "note").strip()
    if name.lower() in MEMORY_TYPES:
        return name.lower(), None  # type: ignore[return-value]
    return "note", name


def _body(markdown: str | None, title: str) -> str:
    """A note's text without its front matter and its title heading."""
    text = _FRONT_MATTER.sub("", markdown or "", count=1).strip()
    first, _, rest = text.partition("\n")
    if first.strip().lstrip("#").strip() == title.strip() and first.startswith("#"):
        text = rest.strip()
    return text


def read(source: Path, project: Path, *, name: str | None = None) -> ForeignStore:
    """The notes of `project` in the basic-memory store at `source` (memory.db or basic-memory's
    folder, ~/.basic-memory): those of the basic-memory projects whose folder is the project
    folder or inside it, or of the one called `name`. InvalidInput for a file that is not a
    basic-memory store, a schema version this reader does not know, a locked or corrupt
    database."""
    path = src.locate(Path(source), "memory.db", TOOL)
    try:
        conn = src.connect(path, TOOL)
        try:
            version = _version(conn, path)
            return _read(conn, path, version, Path(project), name)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise src.problem(path, TOOL, exc) from None


def _read(
    conn: sqlite3.Connection, path: Path, version: str, project: Path, name: str | None
) -> ForeignStore:
    store = ForeignStore(tool="basic-memory", version=version, source=str(path))
    folders = {
        row["id"]: row["path"]
        for row in conn.execute("SELECT id, name, path FROM project ORDER BY id")
        if (row["name"] == name if name is not None else src.same_or_within(row["path"], project))
    }
    bodies = {}
    if "note_content" in src.tables(conn):
        bodies = {
            row[0]: row[1]
            for row in conn.execute("SELECT entity_id, markdown_content FROM note_content")
        }
    valid = _valid_times(conn)
    notes: dict[int, list[ForeignMemory]] = {}
    for entity in conn.execute(
        "SELECT id, project_id, title, note_type, permalink, file_path, created_at, external_id, "
        "entity_metadata "
        "FROM entity WHERE content_type = ? ORDER BY id",
        (_MARKDOWN,),
    ):
        observations = conn.execute(
            "SELECT id, content, category, context, tags, duplicate_index FROM observation "
            "WHERE entity_id = ? ORDER BY id",
            (entity["id"],),
        ).fetchall()
        if entity["project_id"] not in folders:
            store.other_projects += len(observations) or 1
            continue
        notes[entity["id"]] = _memories(
            entity,
            observations,
            bodies.get(entity["id"]),
            (folders[entity["project_id"]], project),
            valid,
        )
    edges: dict[int, list[ForeignEdge]] = {}
    for rel in conn.execute(
        "SELECT from_id, to_id, relation_type FROM relation WHERE to_id IS NOT NULL ORDER BY id"
    ):
        target = notes.get(rel["to_id"])
        if rel["from_id"] in notes and target and rel["to_id"] != rel["from_id"]:
            edges.setdefault(rel["from_id"], []).append(
                ForeignEdge(kind="relates", target=target[0].key, label=rel["relation_type"])
            )
    for entity_id, memories in notes.items():
        links = tuple(edges.get(entity_id, ()))
        store.memories.extend(msgspec.structs.replace(m, edges=links) for m in memories)
    store.memories.sort(key=lambda m: m.created_at)
    return store


def _valid_times(conn: sqlite3.Connection) -> dict[int, tuple[str | None, str | None]]:
    """An observation's `@effective[from,until)` qualifier (basic-memory's valid time), by
    observation id: its bounds as memls's UTC times, an inclusive date bound's day included."""
    if "memory_time_index" not in src.tables(conn):
        return {}
    out = {}
    for row in conn.execute(
        "SELECT source_id, range_axis, lower_value, upper_value, upper_inclusive "
        "FROM memory_time_index WHERE source_type = 'observation' AND time_kind = 'effective' "
        "AND NOT is_empty"
    ):
        until = src.utc(row["upper_value"])
        if until is not None and row["range_axis"] == "date" and row["upper_inclusive"]:
            moment = datetime.fromisoformat(until.replace("Z", "+00:00")) + timedelta(days=1)
            until = moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        out[row["source_id"]] = (src.utc(row["lower_value"]), until)
    return out


def _memories(
    entity: sqlite3.Row,
    observations: list[sqlite3.Row],
    markdown: str | None,
    folders: tuple[str, Path],
    valid: dict[int, tuple[str | None, str | None]],
) -> list[ForeignMemory]:
    created = src.utc(entity["created_at"], naive_is_local=True) or ""
    cited = src.inside(Path(folders[0]) / entity["file_path"], folders[1])
    citations = (ForeignCitation(path=cited),) if cited else ()
    note_key = entity["permalink"] or entity["external_id"]
    note_tags = _note_tags(entity["entity_metadata"])
    out = []
    for obs in observations:
        kind, source_type = _kind(obs["category"])
        text = obs["content"].strip()
        if obs["context"]:
            text = f"{text} ({obs['context'].strip()})"
        ordinal = f"-{obs['duplicate_index']}" if obs["duplicate_index"] else ""
        digest = hashlib.sha256(obs["content"].encode()).hexdigest()[:16]
        since, until = valid.get(obs["id"], (None, None))
        out.append(
            ForeignMemory(
                key=f"{note_key}/observations{ordinal}/{obs['category']}/{digest}",
                text=text,
                type=kind,
                created_at=created,
                valid_from=since or created,
                valid_until=until,
                tags=tuple(dict.fromkeys(_tags(obs["tags"]) + note_tags)),
                citations=citations,
                source_type=source_type,
            )
        )
    body = _body(markdown, entity["title"]) if not out else ""
    if body:
        kind, source_type = _kind(entity["note_type"])
        out.append(
            ForeignMemory(
                key=note_key,
                text=f"{entity['title']}\n\n{body}",
                type=kind,
                created_at=created,
                valid_from=created,
                tags=note_tags,
                citations=citations,
                source_type=source_type,
            )
        )
    return out
