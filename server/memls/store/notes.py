"""Notes read as documents (schema 6): each note unit's section and claim flag, each note
file's standing (status, current, its `NoteFacts` as JSON) and the supersession/amendment links
between note files of one project."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from memls.store.base import Repository
from memls.store.memories import AMONG, among


class NoteUnits(Repository):
    table = "note_units"

    def put(self, memory_id: str, section: str, claim: bool) -> None:
        self._exec(
            "INSERT INTO note_units (memory_id, project, section, claim) "
            "VALUES (:id, :project, :section, :claim) ON CONFLICT (memory_id) DO UPDATE SET "
            "section = excluded.section, claim = excluded.claim",
            id=memory_id,
            section=section,
            claim=int(claim),
        )

    def of(self, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
        """memory id -> (source_uri, source_range, section, claim, current, facts) for the note
        units among `ids` (`current`: its note is not rejected, deprecated or superseded, by
        its own status or by a link; `facts`: its note's NoteFacts JSON); memories that are no
        note units are left out."""
        rows = self._all(
            f"SELECT m.id, m.source_uri, m.source_range, u.section, u.claim, "
            "coalesce(f.current, 1) AND NOT EXISTS (SELECT 1 FROM note_links l "
            "WHERE l.project = :project AND l.older_uri = m.source_uri "
            f"AND l.relation = 'supersedes') AS current, f.facts FROM {AMONG} "
            "JOIN note_units u ON u.memory_id = m.id AND u.project = :project "
            "LEFT JOIN note_files f ON f.project = :project AND f.uri = m.source_uri "
            "WHERE m.project = :project",
            among=among(ids),
        )
        return {row["id"]: row for row in rows}


class NoteFiles(Repository):
    table = "note_files"

    def put(
        self,
        uri: str,
        *,
        number: int | None,
        status: str,
        current: bool,
        facts: str,
        at: str,
        origin: str = "",
    ) -> None:
        self._exec(
            "INSERT INTO note_files (project, uri, number, status, current, facts, synced_at, "
            "origin) VALUES (:project, :uri, :number, :status, :current, :facts, :at, :origin) "
            "ON CONFLICT (project, uri) DO UPDATE SET number = excluded.number, "
            "status = excluded.status, current = excluded.current, facts = excluded.facts, "
            "synced_at = excluded.synced_at, origin = excluded.origin",
            uri=uri,
            number=number,
            status=status,
            current=int(current),
            facts=facts,
            at=at,
            origin=origin,
        )

    def origins(self) -> dict[str, str]:
        """uri -> origin of the project's note files that are an agent's own memory."""
        rows = self._all(
            "SELECT uri, origin FROM note_files WHERE project = :project AND origin <> ''"
        )
        return {row["uri"]: row["origin"] for row in rows}

    def origin(self, uri: str) -> str:
        """The origin the note file was synced with ('' for a note of the project)."""
        row = self._one(
            "SELECT origin FROM note_files WHERE project = :project AND uri = :uri", uri=uri
        )
        return row["origin"] if row is not None else ""

    def remove(self, uri: str) -> None:
        self._exec("DELETE FROM note_files WHERE project = :project AND uri = :uri", uri=uri)

    def facts(self, uris: Iterable[str] | None = None) -> dict[str, str]:
        """uri -> its NoteFacts JSON (every note file of the project, or those of `uris`)."""
        if uris is None:
            rows = self._all("SELECT uri, facts FROM note_files WHERE project = :project")
        else:
            rows = self._all(
                "SELECT f.uri, f.facts FROM json_each(:uris) AS w "
                "JOIN note_files f ON f.project = :project AND f.uri = w.value",
                uris=among(uris),
            )
        return {row["uri"]: row["facts"] for row in rows}


class NoteLinks(Repository):
    table = "note_links"

    def replace_all(self, links: list[dict[str, Any]], at: str) -> bool:
        """Make the project's links these (newer_uri, older_uri, relation, label, stated_in,
        line); True when anything changed."""
        before = {tuple(row) for row in self._rows()}
        self._exec("DELETE FROM note_links WHERE project = :project")
        for link in links:
            self._exec(
                "INSERT OR IGNORE INTO note_links (project, newer_uri, older_uri, relation, "
                "label, stated_in, line, created_at) VALUES (:project, :newer_uri, :older_uri, "
                ":relation, :label, :stated_in, :line, :at)",
                **link,
                at=at,
            )
        return before != {tuple(row) for row in self._rows()}

    def _rows(self) -> list[sqlite3.Row]:
        return self._all(
            "SELECT newer_uri, older_uri, relation, label, stated_in, line FROM note_links "
            "WHERE project = :project ORDER BY newer_uri, older_uri, relation"
        )

    def listed(self) -> list[sqlite3.Row]:
        return self._rows()

    def anchors(self, uris: Iterable[str]) -> dict[str, str]:
        """uri -> the id of the memory that stands for the note: its active unit that starts
        first in the file."""
        rows = self._all(
            "SELECT w.value AS uri, (SELECT m.id FROM memories m INDEXED BY memories_source "
            "WHERE m.source_uri = w.value AND m.project = :project AND m.status = 'active' "
            "ORDER BY CAST(substr(m.source_range, 1, instr(m.source_range, ':') - 1) AS INTEGER), "
            "m.seq LIMIT 1) AS id FROM json_each(:uris) AS w",
            uris=among(uris),
        )
        return {row["uri"]: row["id"] for row in rows if row["id"] is not None}
