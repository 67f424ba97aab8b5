"""The read side of retrieval and detection: every statement runs through the hard filters of
a `Visibility` (project(s), trust, validity, transaction time, types) — the one place those
filters become SQL is `store.visibility.where`."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

from memls import protocol
from memls.scope import Visibility
from memls.store import visibility
from memls.store.db import Database
from memls.store.memories import AMONG, COLUMNS, among, to_memories, with_relations
from memls.store.notes import NoteUnits
from memls.store.tokens import TokenVectors

_WORD = re.compile(r"\w+", re.UNICODE)

# Words so common that BM25 gives them almost no weight, while scanning their postings is
# most of an FTS5 query's time; left out of the MATCH unless nothing else is left.
STOPWORDS = frozenset(
    """
a an and are as at be been being but by can could did do does doing for from had has have
having he her hers him his how i if in into is it its me my of on or our ours she should so
than that the their them then there these they this those to too us was we were what when
where which who whom why will with would you your yours
""".split()
)


def match_expression(text: str) -> str | None:
    """The FTS5 MATCH for a query text: its words, OR'ed, quoted (no query syntax leaks)."""
    words = list(dict.fromkeys(_WORD.findall(text)))
    content = [w for w in words if w.lower() not in STOPWORDS]
    words = content or words
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


class SearchQueries:
    """Reads for retrieval and detection, each in its own snapshot."""

    def __init__(self, db: Database, tokens: TokenVectors | None = None) -> None:
        self.db = db
        self.tokens = tokens

    def token_vectors(self, seen: Visibility, ids: Iterable[str], model: str) -> dict[str, bytes]:
        """The stored token vectors (late interaction) of the candidates `ids`, from each
        project of `seen` (ids already passed the hard filters; this adds none)."""
        if self.tokens is None:
            return {}
        wanted = list(ids)
        found: dict[str, bytes] = {}
        for project in seen.projects:
            found.update(self.tokens.get(project, wanted, model))
        return found

    def bm25(self, seen: Visibility, text: str, n: int) -> dict[str, float]:
        """BM25 candidates (higher is better), the hard filters in the same statement."""
        match = match_expression(text)
        if match is None:
            return {}
        where, args = visibility.where(seen, "m")
        with self.db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT m.id, bm25(memories_fts) AS rank FROM memories_fts "
                f"JOIN memories m ON m.seq = memories_fts.rowid "
                f"WHERE memories_fts MATCH :match AND {where} ORDER BY rank, m.seq LIMIT :n",
                {**args, "match": match, "n": n},
            ).fetchall()
        return {row["id"]: -row["rank"] for row in rows}

    def indexed_rows(self) -> int:
        """The rows of the full-text index (every project's), the N of BM25's IDF: the
        highest row number, read from the primary key at once (a count would read every
        row; rows deleted since barely move its logarithm, which is what is used)."""
        with self.db.transaction(write=False) as conn:
            return int(conn.execute("SELECT coalesce(max(seq), 0) FROM memories").fetchone()[0])

    def containing(
        self, seen: Visibility, stems: Iterable[str], n: int, *, every: bool
    ) -> list[str]:
        """Ids of visible memories whose text has words starting with `stems` (every one of
        them, or any), best BM25 first: the targeted lookup of write-time detection."""
        terms = ['"' + s.replace('"', '""') + '"*' for s in sorted(set(stems)) if _WORD.search(s)]
        if not terms:
            return []
        where, args = visibility.where(seen, "m")
        with self.db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT m.id FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid "
                f"WHERE memories_fts MATCH :match AND {where} "
                f"ORDER BY bm25(memories_fts), m.seq LIMIT :n",
                {**args, "match": (" AND " if every else " OR ").join(terms), "n": n},
            ).fetchall()
        return [row["id"] for row in rows]

    def visible_count(self, seen: Visibility) -> int:
        """How many memories pass the hard filters (a project's size, for what is common)."""
        where, args = visibility.where(seen, "m")
        rows = self.db.read(f"SELECT count(*) AS n FROM memories m WHERE {where}", args)
        return int(rows[0]["n"])

    def mergeable(self, project: str, ids: list[str]) -> set[str]:
        """The memories among `ids` the near-duplicate rule may merge into an earlier one:
        audited `store` (memory/store, ingest) without `force`, and not a note's unit (a
        note's units are its text as written; imports are audited `import`)."""
        if not ids:
            return set()
        rows = self.db.read(
            "SELECT a.memory_id AS id FROM json_each(:among) AS wanted "
            "CROSS JOIN audit a ON a.project = :project AND a.memory_id = wanted.value "
            "WHERE a.op = 'store' AND coalesce(json_extract(a.detail, '$.force'), 0) = 0 "
            "AND NOT EXISTS (SELECT 1 FROM note_units n WHERE n.memory_id = a.memory_id)",
            {"project": project, "among": among(ids)},
        )
        return {row["id"] for row in rows}

    def merged_into(self, project: str, ids: list[str]) -> dict[str, str]:
        """{id: the memory it was merged into} for the memories among `ids` the
        near-duplicate check merged (audited `merge`)."""
        if not ids:
            return {}
        rows = self.db.read(
            "SELECT a.memory_id AS id, json_extract(a.detail, '$.into') AS into_id "
            "FROM json_each(:among) AS wanted "
            "CROSS JOIN audit a ON a.project = :project AND a.memory_id = wanted.value "
            "WHERE a.op = 'merge'",
            {"project": project, "among": among(ids)},
        )
        return {row["id"]: row["into_id"] for row in rows}

    def note_units(self, project: str, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
        """The note-unit facts of the memories among `ids` (`NoteUnits.of`)."""
        with self.db.transaction(write=False) as conn:
            return NoteUnits(conn, project).of(ids)

    def admitted(self, seen: Visibility, ids: list[str]) -> set[str]:
        """The ids among `ids` that pass the hard filters (SQL, the record of truth)."""
        if not ids:
            return set()
        where, args = visibility.where(seen, "m")
        rows = self.db.read(
            f"SELECT m.id FROM {AMONG} WHERE {where}", {**args, "among": among(ids)}
        )
        return {row["id"] for row in rows}

    def visible_rows(self, seen: Visibility, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
        where, args = visibility.where(seen, "m")
        with self.db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM {AMONG} WHERE {where}", {**args, "among": among(ids)}
            ).fetchall()
        return {row["id"]: row for row in rows}

    def visible(
        self, seen: Visibility, ids: Iterable[str], *, relations: bool = True
    ) -> list[protocol.Memory]:
        """The final gate: the candidates as records, through the same hard filters; with
        their links and open contradictions unless `relations=False` (ranking needs none)."""
        where, args = visibility.where(seen, "m")
        with self.db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM {AMONG} WHERE {where}", {**args, "among": among(ids)}
            ).fetchall()
            return to_memories(conn, rows, relations=relations)

    def citing(self, ids: Iterable[str], paths: Iterable[str]) -> set[str]:
        """The ids among `ids` of memories with a citation that stands at one of `paths`."""
        rows = self.db.read(
            "SELECT DISTINCT c.memory_id FROM json_each(:among) AS w JOIN citations c "
            "ON c.memory_id = w.value WHERE c.path IN (SELECT value FROM json_each(:paths))",
            {"among": among(ids), "paths": among(paths)},
        )
        return {row["memory_id"] for row in rows}

    def related(self, memories: list[protocol.Memory]) -> list[protocol.Memory]:
        """Records of a `visible(..., relations=False)` read with their links and open
        contradictions added (edges stay in their project; the rows are not read again)."""
        with self.db.transaction(write=False) as conn:
            return with_relations(conn, memories)

    def placed(
        self,
        seen: Visibility,
        ids: Iterable[str],
    ) -> tuple[list[sqlite3.Row], dict[str, list[sqlite3.Row]]]:
        """(id, source_uri, source_range) of the visible memories among `ids` that have a
        source, and every visible memory of each of those sources (for context expansion)."""
        where, args = visibility.where(seen, "m")
        with self.db.transaction(write=False) as conn:
            seeds = conn.execute(
                f"SELECT m.id, m.source_uri, m.source_range FROM {AMONG} "
                f"WHERE m.source_uri IS NOT NULL AND {where}",
                {**args, "among": among(ids)},
            ).fetchall()
            by_source = {
                uri: conn.execute(
                    f"SELECT m.id, m.source_range FROM memories m INDEXED BY memories_source "
                    f"WHERE m.source_uri = :uri AND {where}",
                    {**args, "uri": uri},
                ).fetchall()
                for uri in dict.fromkeys(row["source_uri"] for row in seeds)
            }
        return seeds, by_source
