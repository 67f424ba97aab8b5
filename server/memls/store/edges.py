"""Edges between memories of one project: `supersedes`, `derived_from`, the contradiction
pairs (`contradicts`, stored both ways with the same detail) with their dismissals, and
`relates` (a link another memory tool named, its name as `label`; read only by
`relations_of`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from memls.store.base import Repository


def links(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, tuple[list[str], list[str]]]:
    """id -> (ids it supersedes, ids that supersede it). The ids come from a scoped read;
    only edges whose two ends are in the edge's own project count."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, tuple[list[str], list[str]]] = {i: ([], []) for i in wanted}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = conn.execute(
            f"SELECT e.src, e.dst FROM edges e JOIN memories a ON a.id = e.src "
            f"JOIN memories b ON b.id = e.dst WHERE e.kind = 'supersedes' "
            f"AND a.project = e.project AND b.project = e.project "
            f"AND (e.src IN ({marks}) OR e.dst IN ({marks})) ORDER BY e.created_at, e.src, e.dst",
            chunk + chunk,
        ).fetchall()
        for src, dst in rows:
            if src in found:
                found[src][0].append(dst)
            if dst in found:
                found[dst][1].append(src)
    _note_links(conn, wanted, found)
    return found


_ANCHOR = (
    "(SELECT a.id FROM memories a INDEXED BY memories_source WHERE a.source_uri = {uri} "
    "AND a.project = l.project AND a.status = 'active' ORDER BY "
    "CAST(substr(a.source_range, 1, instr(a.source_range, ':') - 1) AS INTEGER), a.seq LIMIT 1)"
)


def _note_links(
    conn: sqlite3.Connection, ids: list[str], found: dict[str, tuple[list[str], list[str]]]
) -> None:
    """Supersession stated by notes (schema 6, `note_links`): every unit of a superseded note
    is superseded by the newer note's first unit; that unit supersedes the older's first."""
    rows = conn.execute(
        "SELECT m.id, m.source_uri, l.newer_uri, l.older_uri, "
        + _ANCHOR.format(uri="l.newer_uri")
        + " AS newer, "
        + _ANCHOR.format(uri="l.older_uri")
        + " AS older FROM json_each(?) AS w JOIN memories m ON m.id = w.value "
        "JOIN note_links l ON l.project = m.project AND l.relation = 'supersedes' "
        "AND (l.older_uri = m.source_uri OR l.newer_uri = m.source_uri) "
        "WHERE m.source_uri IS NOT NULL ORDER BY l.created_at, l.newer_uri, l.older_uri",
        (json.dumps(ids),),
    ).fetchall()
    for row in rows:
        older, newer = found[row["id"]][1], found[row["id"]][0]
        if row["source_uri"] == row["older_uri"] and row["newer"] and row["newer"] not in older:
            older.append(row["newer"])
        if row["id"] == row["newer"] and row["older"] and row["older"] not in newer:
            newer.append(row["older"])


def open_conflicts(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """id -> its open contradiction pairs: {other, confidence, newer, current}. `current` is
    the newer statement unless the older one was approved (trust verified) after the newer
    was recorded, or the newer is an agent's own unreviewed memory and the older is not
    (`_over_agent_memory`). Like `links`, the ids come from a scoped read and edges stay in
    a project."""
    wanted = list(dict.fromkeys(ids))
    found: dict[str, list[dict[str, Any]]] = {i: [] for i in wanted}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = conn.execute(
            f"SELECT e.src, e.dst, e.confidence, json_extract(e.detail, '$.newer') AS newer, "
            f"json_extract(e.detail, '$.older') AS older FROM edges e "
            f"WHERE e.kind = 'contradicts' AND e.status = 'open' AND e.src IN ({marks}) "
            f"ORDER BY e.created_at, e.dst",
            chunk,
        ).fetchall()
        if not rows:
            continue
        older_stands = _approved_after(conn, rows) | _over_agent_memory(conn, rows)
        for row in rows:
            current = row["older"] if (row["older"], row["newer"]) in older_stands else row["newer"]
            found[row["src"]].append(
                {
                    "other": row["dst"],
                    "confidence": row["confidence"],
                    "newer": row["newer"],
                    "current": current,
                }
            )
    return found


def _over_agent_memory(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> set[tuple[str, str]]:
    """(older, newer) pairs whose newer statement is an agent's own memory (a note file with
    an origin: Claude Code's auto memory, ...) not approved by a person, and whose older is
    no agent's memory: the project's own notes and memories outrank what an agent told itself,
    whenever it wrote it."""
    return _pairs_where(
        conn,
        rows,
        "JOIN note_files nf ON nf.project = n.project AND nf.uri = n.source_uri "
        "WHERE nf.origin <> '' AND n.trust <> 'verified' AND NOT EXISTS (SELECT 1 FROM "
        "note_files of WHERE of.project = o.project AND of.uri = o.source_uri "
        "AND of.origin <> '')",
    )


def _pairs_where(
    conn: sqlite3.Connection, rows: list[sqlite3.Row], rest: str
) -> set[tuple[str, str]]:
    """The (older, newer) pairs of `rows` that pass `rest` (joins and a WHERE over the older
    memory `o` and the newer `n`), in one statement."""
    pairs = [[row["older"], row["newer"]] for row in rows]
    found = conn.execute(
        "SELECT DISTINCT o.id, n.id FROM json_each(?) AS pair "
        "JOIN memories o ON o.id = json_extract(pair.value, '$[0]') "
        "JOIN memories n ON n.id = json_extract(pair.value, '$[1]') " + rest,
        (json.dumps(pairs),),
    ).fetchall()
    return {(older, newer) for older, newer in found}


def origins(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, str]:
    """id -> the origin of its note file, for the memories among `ids` that are units of an
    agent's own memory (`note_files.origin`)."""
    rows = conn.execute(
        "SELECT m.id, f.origin FROM json_each(?) AS w JOIN memories m ON m.id = w.value "
        "JOIN note_files f ON f.project = m.project AND f.uri = m.source_uri "
        "WHERE f.origin <> ''",
        (json.dumps(list(dict.fromkeys(ids))),),
    ).fetchall()
    return {memory_id: origin for memory_id, origin in rows}


def relations_of(
    conn: sqlite3.Connection, ids: Iterable[str]
) -> dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]]:
    """id -> ((other, label) it relates to, (other, label) relating to it), for the memories
    among `ids` with `relates` edges, in the order they were made (the ids come from a scoped
    read; a `relates` edge is made between two memories of its own project)."""
    wanted = json.dumps(list(dict.fromkeys(ids)))
    rows = conn.execute(
        "SELECT w.value AS id, e.dst AS other, e.label, 0 AS incoming, e.created_at AS made, "
        "e.rowid AS n "
        "FROM json_each(:ids) AS w JOIN edges e ON e.src = w.value AND e.kind = 'relates' "
        "UNION ALL SELECT w.value, e.src, e.label, 1, e.created_at, e.rowid "
        "FROM json_each(:ids) AS w JOIN edges e ON e.dst = w.value AND e.kind = 'relates' "
        "ORDER BY made, n",
        {"ids": wanted},
    ).fetchall()
    found: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {}
    for row in rows:
        found.setdefault(row["id"], ([], []))[row["incoming"]].append((row["other"], row["label"]))
    return found


def _approved_after(conn: sqlite3.Connection, rows: list[sqlite3.Row]) -> set[tuple[str, str]]:
    """(older, newer) pairs whose older statement is verified, by an approval recorded after
    the newer statement was. One statement for all pairs (this runs on every read)."""
    return _pairs_where(
        conn,
        rows,
        "JOIN trust_transitions t ON t.memory_id = o.id AND t.project = o.project "
        "WHERE o.trust = 'verified' AND t.to_trust = 'verified' AND t.at > n.recorded_at",
    )


class Edges(Repository):
    table = "edges"

    def add(self, src: str, dst: str, kind: str, at: str) -> None:
        self._exec(
            "INSERT INTO edges (src, dst, kind, project, created_at) "
            "VALUES (:src, :dst, :kind, :project, :at)",
            src=src,
            dst=dst,
            kind=kind,
            at=at,
        )

    def relate(self, src: str, dst: str, label: str, at: str) -> bool:
        """A `relates` edge named `label`; False when the two are so related already."""
        return (
            self._exec(
                "INSERT OR IGNORE INTO edges (src, dst, kind, project, created_at, label) "
                "VALUES (:src, :dst, 'relates', :project, :at, :label)",
                src=src,
                dst=dst,
                at=at,
                label=label,
            ).rowcount
            == 1
        )

    def has(self, src: str, dst: str, kind: str) -> bool:
        return (
            self._one(
                "SELECT 1 FROM edges WHERE src = :src AND dst = :dst AND kind = :kind "
                "AND project = :project",
                src=src,
                dst=dst,
                kind=kind,
            )
            is not None
        )


def dismissal_key(hash_a: str, hash_b: str) -> tuple[str, str]:
    return (hash_a, hash_b) if hash_a < hash_b else (hash_b, hash_a)


class Conflicts(Repository):
    """Contradiction pairs: two `contradicts` edges (newer -> older, older -> newer)."""

    table = "edges"

    def pair(self, a: str, b: str) -> sqlite3.Row | None:
        """The edge a -> b, whichever of the two is newer."""
        return self._one(
            "SELECT * FROM edges WHERE kind = 'contradicts' AND src = :a "
            "AND dst = :b AND project = :project",
            a=a,
            b=b,
        )

    def existing_pair(self, a: str, b: str) -> sqlite3.Row:
        row = self.pair(a, b)
        if row is None:
            raise LookupError(f"no contradiction {a} -> {b} inside its own transaction")
        return row

    def exists(self, a: str, b: str) -> bool:
        return self.pair(a, b) is not None or self.pair(b, a) is not None

    def add(
        self, newer: str, older: str, confidence: float, detail: dict[str, Any], at: str
    ) -> None:
        text = json.dumps(detail)
        for src, dst in ((newer, older), (older, newer)):
            self._exec(
                "INSERT INTO edges (src, dst, kind, project, created_at, confidence, status, "
                "detail) VALUES (:src, :dst, 'contradicts', :project, :at, :confidence, 'open', "
                ":detail)",
                src=src,
                dst=dst,
                at=at,
                confidence=confidence,
                detail=text,
            )

    def close(self, a: str, b: str, status: str, at: str, *, only_open: bool = False) -> int:
        """Set both edges of a pair to dismissed or resolved."""
        return self._exec(
            "UPDATE edges SET status = :status, closed_at = :at WHERE kind = 'contradicts' "
            "AND project = :project AND ((src = :a AND dst = :b) OR (src = :b AND dst = :a))"
            + (" AND status = 'open'" if only_open else ""),
            status=status,
            at=at,
            a=a,
            b=b,
        ).rowcount

    def listed(self, *, status: str | None, memory_id: str | None, limit: int) -> list[sqlite3.Row]:
        """One row per pair (the newer -> older edge), newest first."""
        clauses = [
            "e.project = :project",
            "e.kind = 'contradicts'",
            "e.src = json_extract(e.detail, '$.newer')",
        ]
        if status is not None:
            clauses.append("e.status = :status")
        if memory_id is not None:
            clauses.append("(e.src = :id OR e.dst = :id)")
        return self._all(
            f"SELECT e.* FROM edges e WHERE {' AND '.join(clauses)} "
            "ORDER BY e.created_at DESC, e.src LIMIT :limit",
            status=status,
            id=memory_id,
            limit=limit,
        )

    def is_dismissed(self, hash_a: str, hash_b: str) -> bool:
        a, b = dismissal_key(hash_a, hash_b)
        return (
            self._one(
                "SELECT 1 FROM conflict_dismissals WHERE project = :project "
                "AND hash_a = :a AND hash_b = :b",
                a=a,
                b=b,
            )
            is not None
        )

    def dismiss(self, hash_a: str, hash_b: str, at: str, note: str | None) -> None:
        a, b = dismissal_key(hash_a, hash_b)
        self._exec(
            "INSERT OR IGNORE INTO conflict_dismissals (project, hash_a, hash_b, at, "
            "note) VALUES (:project, :a, :b, :at, :note)",
            a=a,
            b=b,
            at=at,
            note=note,
        )
