"""Write-time detection: the 10 most similar active, currently valid memories of the same
project (a scoped nearest-neighbour search in the project's own collection, or BM25 in the
project when vectors are off), plus the earlier statements a change of the new memory names
(a lexical lookup of `frames.targets`, since the statement a change replaces is often not among
its nearest), each scored against the new memory by the pure scorer — once their path scopes can
meet (two rules of sibling folders never apply to one file: `notes.scope.can_meet`) and under
the document rules
for note units (`note_pairs`): only claims on both sides, two units of one note only across a
change the note records unless the note is an instruction file (`notes.comparable`), and a unit
of a rejected, deprecated or superseded note is never the newer (current) side. With a pair model
(`meaning`, a `reader.PairReader`), the pairs the signals call a contradiction are read by it
in one batch and scored again with its reading."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memls.conflicts.frames import changes, targets
from memls.conflicts.meaning import Meaning
from memls.conflicts.note_pairs import changes_state, compared, firm, one_instruction_file, records
from memls.conflicts.phrasing import entities, words
from memls.conflicts.scorer import score_pair
from memls.index.chroma import VectorIndex
from memls.index.chroma import where as chroma_where
from memls.notes.scope import can_meet
from memls.protocol import Verdict
from memls.scope import Visibility
from memls.store.memories import scope_of
from memls.store.search import SearchQueries

CANDIDATES = 10
SLACK = 10  # nearest asked beyond CANDIDATES, for those the admission drops
TARGETED = 5  # at most this many earlier statements found by the targeted lookup, per memory
_LOOKUP = 50  # rows the targeted lookup reads before checking them
COMMON_SHARE = 0.05  # a word in 5% of a project's memories is the corpus's, not a thing's
COMMON_MIN = 20  # ... and in at least 20 of them (a small project has no such words)


@dataclass(frozen=True)
class Finding:
    newer: sqlite3.Row
    older: sqlite3.Row
    verdict: Verdict


@dataclass(frozen=True)
class Detector:
    """What detection needs: the store's filtered reads, the vector index (None when vectors
    are off) and the time of the check."""

    reads: SearchQueries
    index: VectorIndex | None
    now: str
    meaning: Callable[[Sequence[tuple[str, str]]], list[Meaning] | None] | None = None

    def candidates(
        self, rows: list[sqlite3.Row], vectors: Any
    ) -> list[list[tuple[str, float | None]]]:
        """For each new row: (id, cosine or None) of the nearest active, valid-now memories of
        its project, itself excluded, then those of the targeted lookup (their cosine read from
        the index). One batched Chroma query with vectors; BM25 (and the scorer's lexical gate)
        without."""
        if not rows:
            return []
        project = rows[0]["project"]
        seen = Visibility(projects=(project,), now=self.now)
        near: list[list[tuple[str, float | None]]] = []
        mates: list[dict[str, float]] = [{} for _ in rows]
        if vectors is not None and self.index is not None:
            # The batch is checked before it is indexed (`Indexer._apply`): the index holds
            # earlier memories, the batch's own earlier rows come from its vectors. Only
            # memories stored no later than the batch's last are admitted (a re-index may
            # have indexed later ones), with SLACK more asked for in case some are.
            last = max(r["seq"] for r in rows)
            known: dict[str, sqlite3.Row] = {}

            def admit(ids: list[str]) -> set[str]:
                visible = self.reads.visible_rows(seen, ids)
                known.update(visible)
                return {i for i, r in visible.items() if r["seq"] <= last}

            found = self.index.nearest(
                project, vectors, CANDIDATES + SLACK, chroma_where(seen), admit
            )
            mates = self._batch_mates(seen, rows, vectors)
            for row, nearest, mine in zip(rows, found, mates):
                best = dict(mine)
                for i, s in nearest:
                    if i in known and _before(known[i], row) and s > best.get(i, -2.0):
                        best[i] = s
                nearest_first = sorted(best.items(), key=lambda item: (-item[1], item[0]))
                near.append([(i, s) for i, s in nearest_first[:CANDIDATES]])
        else:
            for row in rows:
                scores = self.reads.bm25(seen, row["content"], CANDIDATES + 1)
                ranked = sorted(scores, key=lambda i: scores[i], reverse=True)
                lexical: list[tuple[str, float | None]] = [
                    (i, None) for i in ranked if i != row["id"]
                ]
                near.append(lexical[:CANDIDATES])
        out = []
        for k, (row, pairs) in enumerate(zip(rows, near)):
            extra = self.targeted(seen, row, {i for i, _ in pairs})
            cosine: dict[str, float] = {}
            if extra and vectors is not None and self.index is not None:
                cosine = self.index.cosines(project, vectors[k], extra)
                cosine.update({i: mates[k][i] for i in extra if i in mates[k]})
            out.append(pairs + [(i, cosine.get(i)) for i in extra])
        return out

    def _batch_mates(
        self, seen: Visibility, rows: list[sqlite3.Row], vectors: Any
    ) -> list[dict[str, float]]:
        """For each row, the cosine to every visible row of its batch recorded before it."""
        visible = self.reads.visible_rows(seen, [r["id"] for r in rows])
        matrix = np.asarray(vectors, dtype=np.float32)
        matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        sims = matrix @ matrix.T
        return [
            {
                other["id"]: float(sims[k, j])
                for j, other in enumerate(rows)
                if other["id"] in visible and _before(other, row)
            }
            for k, row in enumerate(rows)
        ]

    def targeted(self, seen: Visibility, row: sqlite3.Row, chosen: set[str]) -> list[str]:
        """For a `row` that states a change (`frames.changes`; others get no lookup): earlier
        memories that state what the change replaces (every stem of `frames.targets`), that
        replaced or rejected something `row` names, or that recorded an earlier change to what
        `row` names or changes
        ("Replace Jenkins with Concourse CI pipeline" for "We will switch to GitHub Actions
        for our deployment pipelines")."""
        text = row["content"]
        if not changes(text):
            return []  # the lookup is for what a change replaces: no change, no lookup
        wanted, named = targets(text), entities(text)
        subject = frozenset(w for c in changes(text) for w in c.subject)
        out: list[str] = []
        if wanted:
            out += [
                i
                for i in self.reads.containing(seen, wanted, _LOOKUP, every=True)
                if i not in chosen
            ]
        if named or subject:
            out += [
                i
                for i in self.reads.containing(seen, named | subject, _LOOKUP, every=False)
                if i not in chosen and i not in out
            ]
        if not out:
            return []
        rows = self.reads.visible_rows(seen, out)
        kept = []
        for i in out:
            other = rows.get(i)
            if other is None or i == row["id"] or not _before(other, row):
                continue
            theirs = other["content"]
            if (
                (wanted and wanted <= words(theirs))
                or (targets(theirs) & named)
                or (subject and any(c.new & (named | subject) for c in changes(theirs)))
            ):
                kept.append(i)
        return kept[:TARGETED]

    def common(self, row: sqlite3.Row, size: int) -> frozenset[str]:
        """The words of `row`'s change frames that at least COMMON_SHARE of its project's
        memories (and COMMON_MIN) contain: words of the whole corpus, naming no one thing."""
        found = changes(row["content"])
        stems = frozenset(w for c in found for w in c.old | c.new if w.isalnum())
        if not stems:
            return frozenset()
        seen = Visibility(projects=(row["project"],), now=self.now)
        at = max(COMMON_MIN, int(COMMON_SHARE * size))
        return frozenset(
            w for w in stems if len(self.reads.containing(seen, {w}, at, every=True)) >= at
        )

    def detect_all(self, rows: list[sqlite3.Row], vectors: Any) -> list[list[Finding]]:
        """Findings for each of a batch of new rows of one project; none for a row that is not
        current. The candidates' records and note facts are read once for the batch (two
        statements, not two a row), and the pair model reads the pairs of the whole batch in
        one call."""
        if not rows:
            return []
        seen = Visibility(projects=(rows[0]["project"],), now=self.now)
        # a memory that is not current (imported superseded or past its validity, forgotten
        # meanwhile) states nothing now: its contradictions were its source's to resolve
        current = self.reads.visible_rows(seen, [r["id"] for r in rows])
        if len(current) < len(rows):
            keep = [k for k, r in enumerate(rows) if r["id"] in current]
            found = self.detect_all(
                [rows[k] for k in keep], None if vectors is None else vectors[keep]
            )
            out: list[list[Finding]] = [[] for _ in rows]
            for k, findings in zip(keep, found):
                out[k] = findings
            return out
        near = self.candidates(rows, vectors)
        # the hard filters again: Chroma's metadata may lag the record
        wanted = list(dict.fromkeys(i for pairs in near for i, _ in pairs))
        records = self.reads.visible_rows(seen, wanted) if wanted else {}
        notes = self.reads.note_units(rows[0]["project"], [*(r["id"] for r in rows), *records])
        size = self.reads.visible_count(seen) if any(changes(r["content"]) for r in rows) else 0
        scored = [self.score(row, pairs, records, notes, size) for row, pairs in zip(rows, near)]
        read = self._read(rows, scored)
        return [self.findings(row, s, notes, read) for row, s in zip(rows, scored)]

    def score(
        self,
        row: sqlite3.Row,
        pairs: list[tuple[str, float | None]],
        records: dict[str, sqlite3.Row],
        notes: dict[str, sqlite3.Row],
        size: int = 0,
    ) -> _Scored:
        """`row` scored by the signals against its candidates `pairs`; `records`: the visible
        candidates' rows, `notes`: the note-unit facts of `row` and of them; `size`: how many
        memories its project holds (for the words it uses throughout)."""
        here = notes.get(row["id"])
        if not pairs or (here is not None and (not here["claim"] or not here["current"])):
            return _Scored()  # no claim, or its note was rejected or superseded: never newer
        common = self.common(row, size)
        scored = []
        for memory_id, cosine in pairs:
            other = records.get(memory_id)
            if other is None or not _before(other, row):
                continue  # only what the store held before: the later one's own check covers it
            if not compared(here, notes.get(memory_id)):
                continue
            if not can_meet(scope_of(row["path_scope"]), scope_of(other["path_scope"])):
                continue  # no file both apply to ("services/web/**" / "services/api/**")
            verdict = score_pair(row["content"], other["content"], similarity=cosine, common=common)
            scored.append((other, cosine, verdict))
        return _Scored(common, scored)

    def findings(
        self,
        row: sqlite3.Row,
        scored: _Scored,
        notes: dict[str, sqlite3.Row],
        read: dict[tuple[str, str], Meaning],
    ) -> list[Finding]:
        """The contradictions among `row`'s scored pairs, with the pair model's readings
        (`read`, by (row id, candidate id)) and the document rules."""
        here = notes.get(row["id"])
        findings = []
        for other, cosine, verdict in scored.pairs:
            meaning = read.get((row["id"], other["id"]))
            if meaning is not None:
                verdict = score_pair(
                    row["content"],
                    other["content"],
                    similarity=cosine,
                    common=scored.common,
                    meaning=meaning,
                )
            if not verdict.contradiction:
                continue
            theirs = notes.get(other["id"])
            if records(here, theirs) and not changes_state(verdict):
                continue  # two decision records: a later one that reverses says so
            if one_instruction_file(here, theirs) and not firm(
                verdict, row["content"], other["content"]
            ):
                continue  # two lines of one instruction file: only a firm contradiction
            # an imported memory keeps its source's time: it can be the older of the pair
            newer, older = (row, other) if _recorded_after(row, other) else (other, row)
            findings.append(Finding(newer=newer, older=older, verdict=verdict))
        return findings

    def _read(
        self, rows: list[sqlite3.Row], scored: list[_Scored]
    ) -> dict[tuple[str, str], Meaning]:
        """The pair model's reading of the pairs the signals call a contradiction (past the
        gate by then), by (row id, candidate id), in one call for the batch (empty without a
        model, or while it is unavailable): what it can change there is a veto; reading every
        candidate cost ten times the indexing time (docs/conflicts.md)."""
        if self.meaning is None:
            return {}
        past = [
            (row, other)
            for row, s in zip(rows, scored)
            for other, _, verdict in s.pairs
            if verdict.contradiction
        ]
        found = self.meaning([(r["content"], o["content"]) for r, o in past]) if past else None
        return {} if found is None else {(r["id"], o["id"]): m for (r, o), m in zip(past, found)}


@dataclass(frozen=True)
class _Scored:
    """A new row's candidates scored by the signals alone: (candidate, cosine, verdict), and
    the corpus's common words the scoring took."""

    common: frozenset[str] = frozenset()
    pairs: list[tuple[sqlite3.Row, float | None, Verdict]] = field(default_factory=list)


def _before(other: sqlite3.Row, row: sqlite3.Row) -> bool:
    """`other` was in the store when `row` came (by insertion, not by recorded time: a memory
    imported from another tool's store keeps the time its source recorded it)."""
    return bool(other["seq"] < row["seq"])


def _recorded_after(row: sqlite3.Row, other: sqlite3.Row) -> bool:
    return bool((row["recorded_at"], row["seq"]) > (other["recorded_at"], other["seq"]))
