"""Write-time detection: the 10 most similar active, currently valid memories of the same
project (a scoped nearest-neighbour search in the project's own collection, or BM25 in the
project when vectors are off), plus the earlier statements a change of the new memory names
(a lexical lookup of `frames.targets`, since the statement a change replaces is often not among
its nearest), each scored against the new memory by the pure scorer — once their path scopes can
meet (two rules of sibling folders never apply to one file: `notes.scope.can_meet`) and under
the document rules
for note units: only claims on both sides, two units of one note only across a change the
note records unless the note is an instruction file (`notes.comparable`), and a unit of a
rejected, deprecated or superseded note is never the newer (current) side. With a pair model
(`meaning`, a `reader.PairReader`), the pairs the signals call a contradiction are read by it
in one batch and scored again with its reading."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np

from memls.conflicts.choices import preference_swap, preferred_against
from memls.conflicts.frames import changes, prohibitions, targets
from memls.conflicts.meaning import Meaning
from memls.conflicts.negation import forbidden
from memls.conflicts.phrasing import entities, words
from memls.conflicts.scorer import gate, score_pair
from memls.conflicts.subjects import with_parts
from memls.index.chroma import VectorIndex
from memls.index.chroma import where as chroma_where
from memls.notes import NoteFacts, comparable
from memls.notes.scope import can_meet
from memls.protocol import Signal, SourceRange, Verdict
from memls.scope import Visibility
from memls.store.memories import scope_of
from memls.store.search import SearchQueries

CANDIDATES = 10
SLACK = 10  # nearest asked beyond CANDIDATES, for those the admission drops
TARGETED = 5  # at most this many earlier statements found by the targeted lookup, per memory
_LOOKUP = 50  # rows the targeted lookup reads before checking them
COMMON_SHARE = 0.05  # a word in 5% of a project's memories is the corpus's, not a thing's
COMMON_MIN = 20  # ... and in at least 20 of them (a small project has no such words)

_FACTS = msgspec.json.Decoder(NoteFacts)


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
            if not _compared(here, notes.get(memory_id)):
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
            if _records(here, theirs) and not _changes(verdict):
                continue  # two decision records: a later one that reverses says so
            if _one_instruction_file(here, theirs) and not _firm(
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


def _compared(newer: sqlite3.Row | None, older: sqlite3.Row | None) -> bool:
    """The document rules for one pair (None: the memory is no note unit)."""
    if older is None:
        return True
    if not older["claim"]:
        return False
    if newer is None or newer["source_uri"] != older["source_uri"]:
        return True
    facts = _FACTS.decode(newer["facts"]) if newer["facts"] else NoteFacts()
    return comparable(
        (_line(newer["source_range"]), newer["section"]),
        (_line(older["source_range"]), older["section"]),
        facts,
    )


def _records(newer: sqlite3.Row | None, older: sqlite3.Row | None) -> bool:
    """Are these units of two different decision records (notes with a record number or a
    status, like ADRs)? A record is written at one time about its own decision and is not
    edited to agree with later ones: a later record that reverses an earlier one says so,
    with its status and links (`note_links`) or in the language of a change ("replaces",
    "instead of", "move from", "no longer"). Two records that merely differ (another choice
    for another part, a negated remark, a consequence) are no contradiction."""
    if newer is None or older is None or newer["source_uri"] == older["source_uri"]:
        return False
    return _is_record(newer["facts"]) and _is_record(older["facts"])


def _one_instruction_file(newer: sqlite3.Row | None, older: sqlite3.Row | None) -> bool:
    """Are these two units of one instruction file (AGENTS.md, CLAUDE.md, rule files), not
    on either side of a change the file records (an Update section: such a pair is compared
    as in any note, with every signal)?"""
    if newer is None or older is None or newer["source_uri"] != older["source_uri"]:
        return False
    if not newer["facts"]:
        return False
    facts = _FACTS.decode(newer["facts"])
    if facts.kind != "instructions":
        return False
    return not comparable(
        (_line(newer["source_range"]), newer["section"]),
        (_line(older["source_range"]), older["section"]),
        msgspec.structs.replace(facts, kind=""),
    )


def _firm(verdict: Verdict, new: str, old: str) -> bool:
    """A contradiction between two lines of one instruction file: the lines of one file share
    their project's words, so a shared subject word beside a negator, or two different names
    near each other, is what neighbouring instructions look like. What a later edit that
    contradicts an earlier line looks like: it states a change of what the other line says
    (an aligned change frame), gives the same attribute another value, uses the opposite word,
    reverses a preference, says the same with one thing changed, or forbids exactly what the
    other line prescribes (or prescribes what it forbids), or the pair model is sure the two
    contradict — and the two lines are related by
    meaning on their own (the similarity gate open)."""
    if gate(verdict.similarity, verdict.similarity_source) <= 0.0:
        return False
    if _labelled_apart(new, old):
        return False  # "**Structural:** ..." / "**Content:** ...": two items of a list
    kinds = {s.kind for s in verdict.signals if s.weight >= 0.85}
    if kinds & {"value_change", "antonym", "meaning"}:
        return True
    if any(_names_all_it_replaced(s, old) for s in verdict.signals):
        return True
    if kinds & {"negation", "choice_change"} and _mirrored(new, old):
        return True
    if preference_swap(new, old) or preferred_against(new, old) or preferred_against(old, new):
        return True  # one line prefers what the other ranks below ("Prefer mocks over
        #              end-to-end tests" / "Use end-to-end tests (not mocks)")
    return _forbids_what_it_says(new, old) or _forbids_what_it_says(old, new)


def _mirrored(new: str, old: str) -> bool:
    """The later line says what the earlier says with one thing changed: at least two words
    in common and at most two that are not ("Use double quotes for strings" / "Use single
    quotes for strings"; "Always run the linter before committing" / "Never run ...")."""
    a, b = words(new) | entities(new), words(old) | entities(old)
    return len(a & b) >= 2 and len(a ^ b) <= 2


def _labelled_apart(new: str, old: str) -> bool:
    """Both lines open with a label and the labels differ: two items of one list, each about
    its own thing ("**Fixtures**: Store in ..." / "**Snapshots**: Store in ...")."""
    labels = [_LABEL.match(t) for t in (new, old)]
    return bool(
        labels[0] and labels[1] and labels[0].group(1).lower() != labels[1].group(1).lower()
    )


_LABEL = re.compile(r"^[*_\s]*([\w .-]{1,40}?)[*_\s]*:[*_]*\s")


def _names_all_it_replaced(signal: Signal, old: str) -> bool:
    """A change frame whose replaced thing the other line names in full, not a word of it
    ("Edit package.json directly instead of using `pnpm add`" / "Run commands with `pnpm
    run`": the other line states pnpm, not `pnpm add`)."""
    if signal.kind != "temporal_override" or signal.weight < 0.85:
        return False
    replaced = frozenset().union(*(words(t) for t in signal.triggers[1:]))
    return replaced <= with_parts(words(old) | entities(old))


def _forbids_what_it_says(rule: str, other: str) -> bool:
    """`rule` forbids a thing, and `other` names all of that thing, not some of its words
    ("Never create random example files" / "Update the files in examples/": no)."""
    names = (entities(rule), entities(other))
    if not forbidden(rule, other, names):
        return False
    stated = with_parts(words(other) | names[1])
    return any(thing <= stated and not _FACT.match(p) for thing, p in prohibitions(rule))


#: "so uv doesn't rewrite uv.lock", "the client cannot reach ...": what a thing does or can
#: do, not a rule that forbids an act.
_FACT = re.compile(r"(?:does not|doesn't|cannot|can't|may not)\b")


def _is_record(facts: str | None) -> bool:
    """A decision record: by its path (`notes.records` globs), else, for a note of no known
    kind, by its record number or status. An instruction file never is one."""
    if not facts:
        return False
    read = _FACTS.decode(facts)
    if read.kind:
        return read.kind == "record"
    return read.number is not None or read.status != ""


def _changes(verdict: Verdict) -> bool:
    """A change-of-state frame of the newer text aligned with the older (not the weak
    update-marker corroboration), between two statements also related by meaning: the
    similarity gate open on its own, not only held at its floor by the frame's alignment."""
    return gate(verdict.similarity, verdict.similarity_source) > 0.0 and any(
        s.kind == "temporal_override" and s.weight >= 0.85 for s in verdict.signals
    )


def _line(source_range: str | None) -> int:
    where = SourceRange.parse(source_range)
    return where.start_line if where is not None else 0
