"""Restatements across note files: a unit of one note that says in other words what a unit of
another note says (the near-duplicate rule of the engine, `NearDuplicates.restated`, asked as
it is) is linked to it (`note_restates`), never merged into it.

Each stays a memory of its own files with its own wording: removing or editing CLAUDE.md
forgets CLAUDE.md's wording only when no file states it any more, and AGENTS.md's wording is
kept while AGENTS.md says it. Merging the paraphrase's file into the other memory as a further
source would keep a text that no file says any more once the file that says it went."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from memls.dedup.lookup import NearDuplicates
from memls.engine.shared import Announcer, Clock, Units
from memls.store.sources import NoteUnitQueries

Then = Callable[[str, list[sqlite3.Row], Any], None]


class NoteRestatements:
    """The indexer's check of a batch just embedded, between the merge of stored restatements
    and the contradiction check: each note unit of the batch that restates a memory of
    another note file recorded before it is linked to it (`memory/changed`, op `restates`,
    ids: the unit, then the memory it restates). Without vectors or models nothing is linked."""

    def __init__(
        self,
        units: Units,
        reads: NoteUnitQueries,
        near: NearDuplicates,
        clock: Clock,
        announcer: Announcer,
    ) -> None:
        self.units = units
        self.reads = reads
        self.near = NearDuplicates(reads, near.index, near.models)
        self.clock = clock
        self.announcer = announcer

    def after_index(
        self, project: str, rows: list[sqlite3.Row], vectors: Any, *, then: Then
    ) -> None:
        self.link(project, rows, vectors)
        then(project, rows, vectors)

    def link(self, project: str, rows: list[sqlite3.Row], vectors: Any) -> dict[str, str]:
        """{unit id: the memory it restates} for the links made."""
        if vectors is None or not rows:
            return {}
        found = self.near.restated(project, rows, vectors, self.clock())
        if not found:
            return {}
        files = self.reads.source_uris(project, [*found, *found.values()])
        now = self.clock()
        linked: dict[str, str] = {}
        with self.units.write(project) as tx:
            for new_id, old_id in found.items():
                mine, theirs = files.get(new_id, set()), files.get(old_id, set())
                if not mine or not theirs or mine & theirs:
                    continue  # a memory of no note, or the two share a file
                new, old = tx.memories.fetch(new_id), tx.memories.fetch(old_id)
                if new is None or old is None or {new["status"], old["status"]} != {"active"}:
                    continue  # forgotten or superseded meanwhile
                if tx.note_restates.link(new_id, old_id, now):
                    linked[new_id] = old_id
        for new_id, old_id in linked.items():
            self.announcer.changed(project, "restates", [new_id, old_id])
        return linked
