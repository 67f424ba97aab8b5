"""The memories table (and its FTS shadow, kept by triggers): one project's rows."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterable

import msgspec

from memls import protocol
from memls.scope import USER_PROJECT
from memls.store.base import Repository
from memls.store.edges import links, open_conflicts, origins, relations_of
from memls.store.imported import tools_of
from memls.store.stated import restates_of, sources_of
from memls.store.tags import tags_of

MEMORY_FIELDS = (
    "id",
    "project",
    "content",
    "type",
    "status",
    "trust",
    "valid_from",
    "valid_until",
    "recorded_at",
    "invalidated_at",
    "feedback_score",
    "content_hash",
    "canonical_hash",
    "source_uri",
    "source_range",
    "derived_from",
    "seen_again",
    "last_seen_at",
)
COLUMNS = "m.seq, m.path_scope, " + ", ".join(f"m.{name}" for name in MEMORY_FIELDS)
"""Every memory field, plus `seq` (insertion order, for tie-breaks) and `path_scope` (the
files it applies to: `scope_of`)."""


def scope_of(value: str | None) -> list[str]:
    """A `path_scope` column as globs (one a line; NULL: the whole project, [])."""
    return [line for line in (value or "").split("\n") if line]


def scope_column(scope: Iterable[str]) -> str | None:
    """Globs as the `path_scope` column keeps them."""
    globs = [g for g in scope if g]
    return "\n".join(globs) if globs else None


AMONG = "json_each(:among) AS wanted CROSS JOIN memories m ON m.id = wanted.value"
"""FROM clause (alias m) for the memories with the ids in `:among` (a JSON list), looked up id
by id. CROSS JOIN fixes the loop order: with `m.id IN (...)` next to the project filters,
SQLite scanned the project's validity index instead (10 ms for 100 ids at 10k memories; this
way 0.3 ms)."""


def among(ids: Iterable[str]) -> str:
    """The `:among` argument of `AMONG`."""
    return json.dumps(list(ids))


def to_memories(
    conn: sqlite3.Connection, rows: list[sqlite3.Row], *, relations: bool = True
) -> list[protocol.Memory]:
    """Rows as wire records, with their supersession links, open contradictions, tags and
    named relations (`relations=False`: without them, empty lists; fewer statements)."""
    plain = [
        protocol.Memory(
            **{name: row[name] for name in MEMORY_FIELDS}, scope=scope_of(row["path_scope"])
        )
        for row in rows
    ]
    return with_relations(conn, plain) if relations else plain


def with_relations(
    conn: sqlite3.Connection, memories: list[protocol.Memory]
) -> list[protocol.Memory]:
    """The records (from a scoped read) with their supersession links, open contradictions,
    citations, sources, tags and named relations filled in: the rows are not read again."""
    ids = [m.id for m in memories]
    linked = links(conn, ids)
    contested = open_conflicts(conn, ids)
    origin = origins(conn, [m.id for m in memories if m.source_uri])
    cited = citations_of(conn, ids)
    stated = sources_of(conn, [m.id for m in memories if m.source_uri])
    restated = restates_of(conn, list(stated))
    tools = tools_of(conn, ids)
    tagged = tags_of(conn, ids)
    related = relations_of(conn, ids)
    out = []
    for memory in memories:
        refs = [
            (
                c,
                protocol.ConflictRef(
                    id=c["other"],
                    confidence=c["confidence"],
                    newer=c["newer"],
                    current=c["current"],
                ),
            )
            for c in contested[memory.id]
        ]
        out.append(
            msgspec.structs.replace(
                memory,
                supersedes=linked[memory.id][0],
                superseded_by=linked[memory.id][1],
                contradicts=[ref for c, ref in refs if c["newer"] == memory.id],
                contradicted_by=[ref for c, ref in refs if c["newer"] != memory.id],
                citations=cited.get(memory.id, []),
                stale=any(c.state in STALE for c in cited.get(memory.id, ())),
                origin=origin.get(memory.id),
                sources=[
                    protocol.NoteSource(uri=uri, range=where or None)
                    for uri, where in stated.get(memory.id, ())
                ],
                restates=restated.get(memory.id, []),
                imported_from=tools.get(memory.id),
                tags=tagged.get(memory.id, []),
                related=_refs(related, memory.id, 0),
                related_by=_refs(related, memory.id, 1),
            )
        )
    return out


STALE = ("changed", "missing")


def _refs(
    related: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]],
    memory_id: str,
    way: int,
) -> list[protocol.RelationRef]:
    pairs = related[memory_id][way] if memory_id in related else []
    return [protocol.RelationRef(id=other, label=label or None) for other, label in pairs]


def citations_of(conn: sqlite3.Connection, ids: list[str]) -> dict[str, list[protocol.Citation]]:
    """memory id -> its citations as the wire carries them (memories that cite nothing are
    left out). Ids are unique across projects, so the ids of a scoped read suffice."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT c.memory_id, c.path, c.start_line, c.end_line, c.state, c.kind, c.symbol, "
        "c.inferred, c.cited_path, c.diff FROM json_each(?) AS w "
        "JOIN citations c ON c.memory_id = w.value ORDER BY c.memory_id, c.ordinal",
        (among(ids),),
    ).fetchall()
    out: dict[str, list[protocol.Citation]] = {}
    for row in rows:
        out.setdefault(row["memory_id"], []).append(
            protocol.Citation(
                path=row["path"],
                start_line=row["start_line"],
                end_line=row["end_line"],
                state=row["state"],
                kind=row["kind"],
                symbol=row["symbol"],
                inferred=bool(row["inferred"]),
                cited_path=row["cited_path"] if row["cited_path"] != row["path"] else None,
                diff=row["diff"],
            )
        )
    return out


class Memories(Repository):
    table = "memories"

    def fetch(self, memory_id: str) -> sqlite3.Row | None:
        return self._one(
            f"SELECT {COLUMNS} FROM memories m WHERE m.id = :id AND m.project = :project",
            id=memory_id,
        )

    def existing(self, memory_id: str) -> sqlite3.Row:
        """The row of a memory known to exist in this transaction (LookupError otherwise)."""
        row = self.fetch(memory_id)
        if row is None:
            raise LookupError(f"memory {memory_id} vanished inside its own transaction")
        return row

    def fetch_many(self, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
        rows = self._all(
            f"SELECT {COLUMNS} FROM {AMONG} WHERE m.project = :project", among=among(ids)
        )
        return {row["id"]: row for row in rows}

    def next_validity_change(self, now: str) -> str | None:
        """The first moment after `now` at which a memory of the project enters or leaves
        its validity (a later valid_from, a valid_until): what "valid now" shows changes
        then without any write."""
        row = self._one(
            "SELECT min(t) FROM ("
            "SELECT min(valid_from) AS t FROM memories WHERE project = :project "
            "AND status = 'active' AND valid_from > :now "
            "UNION ALL SELECT min(valid_until) FROM memories WHERE project = :project "
            "AND status = 'active' AND valid_until > :now)",
            now=now,
        )
        return row[0] if row is not None else None

    def active_by_canonical(self, canonical: str) -> sqlite3.Row | None:
        return self._one(
            f"SELECT {COLUMNS} FROM memories m WHERE m.project = :project "
            "AND m.canonical_hash = :hash AND m.status = 'active'",
            hash=canonical,
        )

    def active_by_source(self, uri: str) -> list[sqlite3.Row]:
        return self._all(
            f"SELECT {COLUMNS} FROM memories m INDEXED BY memories_source "
            "WHERE m.project = :project AND m.source_uri = :uri "
            "AND m.status = 'active'",
            uri=uri,
        )

    def all(self) -> list[sqlite3.Row]:
        return self._all(f"SELECT {COLUMNS} FROM memories m WHERE m.project = :project")

    def listed(
        self,
        *,
        status: str | None,
        trust: str | None,
        type_: str | None,
        limit: int,
        include_user: bool = False,
    ) -> list[sqlite3.Row]:
        """Newest first; the user-wide scope only when asked."""
        clauses = ["(m.project = :project OR (:user IS NOT NULL AND m.project = :user))"]
        for column, value in (("status", status), ("trust", trust), ("type", type_)):
            if value is not None:
                clauses.append(f"m.{column} = :{column}")
        return self._all(
            f"SELECT {COLUMNS} FROM memories m WHERE {' AND '.join(clauses)} "
            "ORDER BY m.recorded_at DESC, m.seq DESC LIMIT :limit",
            user=USER_PROJECT if include_user else None,
            status=status,
            trust=trust,
            type=type_,
            limit=limit,
        )

    def counts(self, column: str) -> dict[str, int]:
        if column not in ("status", "trust", "type"):
            raise ValueError(column)
        rows = self._all(
            f"SELECT {column} AS k, count(*) AS n FROM memories "
            f"WHERE project = :project GROUP BY {column} ORDER BY {column}"
        )
        return {row["k"]: row["n"] for row in rows}

    def insert(
        self,
        *,
        content: str,
        type_: str,
        valid_from: str,
        valid_until: str | None,
        recorded_at: str,
        content_hash: str,
        canonical: str,
        source_uri: str | None,
        source_range: str | None,
        derived_from: str | None,
        path_scope: str | None = None,
    ) -> str:
        memory_id = "m_" + secrets.token_hex(8)
        self._exec(
            "INSERT INTO memories (id, project, content, type, valid_from, valid_until, "
            "recorded_at, content_hash, canonical_hash, source_uri, source_range, derived_from, "
            "path_scope) "
            "VALUES (:id, :project, :content, :type, :valid_from, :valid_until, :recorded_at, "
            ":content_hash, :canonical, :source_uri, :source_range, :derived_from, :path_scope)",
            id=memory_id,
            content=content,
            type=type_,
            valid_from=valid_from,
            valid_until=valid_until,
            recorded_at=recorded_at,
            content_hash=content_hash,
            canonical=canonical,
            source_uri=source_uri,
            source_range=source_range,
            derived_from=derived_from,
            path_scope=path_scope,
        )
        return memory_id

    def seen_again(self, memory_id: str, at: str) -> None:
        """The memory was stated again (an exact or near duplicate of it was not stored)."""
        self._exec(
            "UPDATE memories SET seen_again = seen_again + 1, last_seen_at = :at "
            "WHERE id = :id AND project = :project",
            id=memory_id,
            at=at,
        )

    def with_content(self) -> list[sqlite3.Row]:
        """(id, content) of every memory of the project, in insertion order (doctor's
        secrets check reads them all)."""
        return self._exec(
            "SELECT id, content FROM memories WHERE project = :project ORDER BY seq"
        ).fetchall()

    def rewrite(self, memory_id: str, content: str, content_hash: str, canonical: str) -> None:
        """Replace a memory's text (a redaction of a secret stored by an older version)."""
        self._exec(
            "UPDATE memories SET content = :content, content_hash = :content_hash, "
            "canonical_hash = :canonical WHERE id = :id AND project = :project",
            id=memory_id,
            content=content,
            content_hash=content_hash,
            canonical=canonical,
        )

    def set_range(self, memory_id: str, source_range: str) -> None:
        self._exec(
            "UPDATE memories SET source_range = :range WHERE id = :id AND project = :project",
            id=memory_id,
            range=source_range,
        )

    def set_scope(self, memory_id: str, path_scope: str | None) -> None:
        """The files the memory applies to changed (its note's front matter or place)."""
        self._exec(
            "UPDATE memories SET path_scope = :scope WHERE id = :id AND project = :project",
            id=memory_id,
            scope=path_scope,
        )

    def set_source(self, memory_id: str, source_uri: str, source_range: str) -> None:
        """The memory is now the unit at `source_range` of the note `source_uri`."""
        self._exec(
            "UPDATE memories SET source_uri = :uri, source_range = :range "
            "WHERE id = :id AND project = :project",
            id=memory_id,
            uri=source_uri,
            range=source_range,
        )

    def supersede(self, memory_id: str, until: str, at: str) -> None:
        """End the validity and mark it superseded and invalidated, in one UPDATE."""
        self._exec(
            "UPDATE memories SET status = 'superseded', valid_until = :until, "
            "invalidated_at = :at WHERE id = :id AND project = :project "
            "AND status = 'active'",
            id=memory_id,
            until=until,
            at=at,
        )

    def set_trust(self, memory_id: str, trust: str) -> None:
        self._exec(
            "UPDATE memories SET trust = :trust WHERE id = :id AND project = :project",
            id=memory_id,
            trust=trust,
        )

    def set_feedback_score(self, memory_id: str, score: int) -> None:
        self._exec(
            "UPDATE memories SET feedback_score = :score WHERE id = :id AND project = :project",
            id=memory_id,
            score=score,
        )

    def delete(self, memory_id: str) -> None:
        self._exec("DELETE FROM memories WHERE id = :id AND project = :project", id=memory_id)

    def due_by_valid_until(self, now: str) -> list[str]:
        """Active memories whose validity has ended by `now`."""
        return [
            row["id"]
            for row in self._all(
                "SELECT id FROM memories WHERE project = :project AND status = 'active' "
                "AND valid_until IS NOT NULL AND valid_until <= :now ORDER BY seq",
                now=now,
            )
        ]

    def due_by_age(self, type_: str, cutoff: str) -> list[str]:
        """Active memories of a type that became valid at or before `cutoff`."""
        return [
            row["id"]
            for row in self._all(
                "SELECT id FROM memories WHERE project = :project AND status = 'active' "
                "AND type = :type AND valid_from <= :cutoff ORDER BY seq",
                type=type_,
                cutoff=cutoff,
            )
        ]
