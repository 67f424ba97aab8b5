"""One fact in several note files (schema 13): every note file that states a memory, with the
lines it stands on (`note_sources`), and the restatements across note files linked
(`note_restates`). A memory's own `source_uri`/`source_range` are its first source."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from memls.store.base import Repository
from memls.store.memories import COLUMNS, among
from memls.store.search import SearchQueries


class NoteSources(Repository):
    table = "note_sources"

    def stated_in(self, uri: str) -> list[sqlite3.Row]:
        """The active memories the note `uri` states, each with the lines it stands on there
        (`stated_range`) and the files they apply to (`stated_scope`). A note unit recorded
        before its sources were kept counts by its own source_uri."""
        return self._all(
            f"SELECT {COLUMNS}, s.source_range AS stated_range, s.path_scope AS stated_scope "
            "FROM note_sources s JOIN memories m ON m.id = s.memory_id "
            "WHERE s.project = :project AND s.uri = :uri AND m.status = 'active' "
            f"UNION ALL SELECT {COLUMNS}, m.source_range, m.path_scope "
            "FROM memories m INDEXED BY memories_source "
            "WHERE m.project = :project AND m.source_uri = :uri AND m.status = 'active' "
            "AND NOT EXISTS (SELECT 1 FROM note_sources s WHERE s.memory_id = m.id "
            "AND s.uri = :uri)",
            uri=uri,
        )

    def put(self, memory_id: str, uri: str, source_range: str, path_scope: str | None) -> None:
        """`uri` states the memory at `source_range` (a source added keeps its place in the
        order: the first source stays first)."""
        self._exec(
            "INSERT INTO note_sources (memory_id, project, uri, source_range, path_scope, seq) "
            "VALUES (:id, :project, :uri, :range, :scope, "
            "(SELECT coalesce(max(seq), 0) + 1 FROM note_sources WHERE project = :project)) "
            "ON CONFLICT (memory_id, uri) DO UPDATE SET source_range = excluded.source_range, "
            "path_scope = excluded.path_scope",
            id=memory_id,
            uri=uri,
            range=source_range,
            scope=path_scope,
        )

    def is_note_unit(self, memory_id: str) -> bool:
        """Whether the memory is a note's unit (a memory stored by hand is no note's, even
        when a note states the same)."""
        row = self._one(
            "SELECT 1 FROM note_units WHERE project = :project AND memory_id = :id",
            id=memory_id,
        )
        return row is not None

    def drop(self, memory_id: str, uri: str) -> list[sqlite3.Row]:
        """`uri` no longer states the memory; the sources left (uri, source_range,
        path_scope), first first."""
        self._exec(
            "DELETE FROM note_sources WHERE project = :project AND memory_id = :id AND uri = :uri",
            id=memory_id,
            uri=uri,
        )
        return self.of_memory(memory_id)

    def of_memory(self, memory_id: str) -> list[sqlite3.Row]:
        return self._all(
            "SELECT uri, source_range, path_scope FROM note_sources "
            "WHERE project = :project AND memory_id = :id ORDER BY seq",
            id=memory_id,
        )


class NoteRestates(Repository):
    table = "note_restates"

    def link(self, memory_id: str, restated_id: str, at: str) -> bool:
        """`memory_id` restates `restated_id` (in another note file); True when new."""
        cursor = self._exec(
            "INSERT OR IGNORE INTO note_restates (memory_id, restated_id, project, created_at) "
            "VALUES (:id, :restated, :project, :at)",
            id=memory_id,
            restated=restated_id,
            at=at,
        )
        return cursor.rowcount > 0


class NoteUnitQueries(SearchQueries):
    """The search reads with the note units of a batch as the rows the near-duplicate rule
    reads (`NearDuplicates.restated`): a unit that restates a memory of another note file is
    linked to it, never merged into it."""

    def mergeable(self, project: str, ids: list[str]) -> set[str]:
        if not ids:
            return set()
        rows = self.db.read(
            "SELECT DISTINCT s.memory_id AS id FROM json_each(:among) AS wanted "
            "JOIN note_sources s ON s.memory_id = wanted.value AND s.project = :project",
            {"project": project, "among": among(ids)},
        )
        return {row["id"] for row in rows}

    def source_uris(self, project: str, ids: Iterable[str]) -> dict[str, set[str]]:
        """memory id -> the note files that state it (memories no note states left out)."""
        rows = self.db.read(
            "SELECT s.memory_id, s.uri FROM json_each(:among) AS wanted "
            "JOIN note_sources s ON s.memory_id = wanted.value AND s.project = :project",
            {"project": project, "among": among(ids)},
        )
        out: dict[str, set[str]] = {}
        for row in rows:
            out.setdefault(row["memory_id"], set()).add(row["uri"])
        return out
