"""Contradictions: detection after indexing, the project's open pairs, acting on one, and the
verdict for a single pair of texts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from memls import protocol
from memls.conflicts import resolver
from memls.conflicts.detector import Detector, Finding
from memls.conflicts.meaning import decided
from memls.conflicts.reader import PairReader
from memls.conflicts.scorer import score_pair
from memls.engine.shared import Announcer, Clock, Indexing, Units, checked_text, log, require
from memls.errors import MemlsError, NotFound
from memls.index.chroma import VectorIndex
from memls.models import ModelRuntime
from memls.protocol import wording
from memls.scope import project_key
from memls.store.search import SearchQueries
from memls.store.unit import Tx


class Conflicts:
    """Detection after indexing (`after_index`, the indexer's callback), conflicts, resolve
    (superseding through `supersede`, the writes' own), check_pair."""

    def __init__(
        self,
        units: Units,
        search: SearchQueries,
        clock: Clock,
        index: VectorIndex | None,
        models: ModelRuntime | None,
        indexing: Indexing,
        announcer: Announcer,
        *,
        auto_supersede: bool,
        supersede: Callable[[protocol.SupersedeParams], protocol.SupersedeResult],
    ) -> None:
        self.units = units
        self.search = search
        self.clock = clock
        self.index = index
        self.models = models
        self.indexing = indexing
        self.announcer = announcer
        self.auto_supersede = auto_supersede
        self.supersede = supersede

    def after_index(self, project: str, rows: list[Any], vectors: Any) -> None:
        """Runs on the indexer thread for a batch of new memories: detect, record (one unit
        of work for the batch: one commit, not one a memory), tell (one `memory/conflicts`
        notification per memory that got new pairs, with all of its open pairs: the fronts
        need not ask again)."""
        reader = PairReader(self.models.pair if self.models is not None else None, decided)
        detector = Detector(self.search, self.index, self.clock(), reader)
        found = [(row, f) for row, f in zip(rows, detector.detect_all(rows, vectors)) if f]
        if found:
            self._record_findings(project, found)

    def _record_findings(self, project: str, found: list[tuple[Any, list[Finding]]]) -> None:
        now = self.clock()
        written: list[tuple[Any, list[Finding]]] = []
        with self.units.write(project) as tx:
            for row, findings in found:
                if tx.memories.fetch(row["id"]) is None:
                    continue  # forgotten meanwhile
                mine = []
                for f in findings:
                    if tx.memories.fetch(f.older["id"]) is None:
                        continue  # forgotten between the scoring and this transaction
                    if resolver.record(tx.conflicts, f.newer, f.older, f.verdict, now):
                        mine.append(f)
                        tx.audit(
                            "conflict_detected",
                            f.newer["id"],
                            now,
                            older=f.older["id"],
                            confidence=round(f.verdict.confidence, 4),
                        )
                if mine:
                    written.append((row, mine))
        for row, mine in written:
            for f in mine:
                if self.auto_supersede and resolver.proposes_supersede(f.verdict, f.newer, f.older):
                    try:
                        self.resolve(
                            protocol.ResolveParams(
                                a=f.newer["id"],
                                b=f.older["id"],
                                action="supersede",
                                project=project,
                                note="auto_supersede",
                            )
                        )
                    except MemlsError as exc:
                        log.warning("auto supersede failed: %s", exc)
            if self.announcer.listeners:  # nobody to tell: no need to read the pairs back
                pairs = self.conflicts(protocol.ConflictsParams(project=project, id=row["id"]))
                self.announcer.notify(
                    "memory/conflicts",
                    protocol.ConflictsNotification(
                        project=project, id=row["id"], conflicts=pairs.conflicts
                    ),
                )

    @staticmethod
    def _conflict(tx: Tx, edge: sqlite3.Row) -> protocol.Conflict:
        detail = json.loads(edge["detail"])
        newer, older = tx.records(
            [tx.memories.existing(detail["newer"]), tx.memories.existing(detail["older"])]
        )
        signals = [protocol.Signal(**s) for s in detail["signals"]]
        return protocol.Conflict(
            project=edge["project"],
            status=edge["status"],
            confidence=edge["confidence"],
            similarity=detail["similarity"],
            similarity_source=detail["similaritySource"],
            signals=signals,
            newer=newer,
            older=older,
            detected_at=edge["created_at"],
            proposal=detail.get("proposal"),
            closed_at=edge["closed_at"],
            words=wording.words(edge["project"], signals, newer, older),
        )

    def conflicts(self, params: protocol.ConflictsParams) -> protocol.ConflictsResult:
        """Detected contradictions of the project (one entry per pair)."""
        project = project_key(params.project)
        with self.units.read(project) as tx:
            edges = tx.conflicts.listed(
                status=params.status,
                limit=params.limit,
                memory_id=params.id.strip() if params.id is not None else None,
            )
            return protocol.ConflictsResult(
                project=project,
                conflicts=[self._conflict(tx, e) for e in edges],
                links=[
                    protocol.NoteLink(
                        newer_uri=r["newer_uri"],
                        older_uri=r["older_uri"],
                        relation=r["relation"],
                        label=r["label"],
                        stated_in=r["stated_in"],
                        line=r["line"],
                    )
                    for r in tx.note_links.listed()
                ],
            )

    def resolve(self, params: protocol.ResolveParams) -> protocol.ResolveResult:
        """Dismiss (remembered by content), resolve, or supersede the older by the newer."""
        project = project_key(params.project)
        note = checked_text(params.note, "note", required=False)
        now = self.clock()
        with self.units.write(project) as tx:
            a = require(tx, params.a, "a")
            b = require(tx, params.b, "b")
            edge = tx.conflicts.pair(a["id"], b["id"])
            if edge is None:
                raise NotFound(f"no contradiction between {a['id']} and {b['id']}", field="b")
            detail = json.loads(edge["detail"])
            if params.action == "supersede":
                self.supersede(
                    protocol.SupersedeParams(
                        old=detail["older"], by=detail["newer"], project=project
                    )
                )
            if params.action == "dismiss":
                tx.conflicts.dismiss(a["canonical_hash"], b["canonical_hash"], now, note)
            status = "dismissed" if params.action == "dismiss" else "resolved"
            tx.conflicts.close(a["id"], b["id"], status, now)
            tx.audit(
                f"conflict_{status}",
                detail["newer"],
                now,
                older=detail["older"],
                action=params.action,
            )
            conflict = self._conflict(
                tx, tx.conflicts.existing_pair(detail["newer"], detail["older"])
            )
        self.indexing.kick()
        self.announcer.changed(project, "resolve", [detail["newer"], detail["older"]])
        return protocol.ResolveResult(project=project, conflict=conflict)

    def check_pair(self, params: protocol.CheckPairParams) -> protocol.Verdict:
        """The verdict for one pair of texts, gated by the embedder's cosine when it runs, with
        the pair model's reading when the signals call it a contradiction (as detection does)."""
        new = checked_text(params.new, "new")
        existing = checked_text(params.existing, "existing")
        assert new is not None and existing is not None
        cosine = None
        if self.models is not None:
            try:
                vectors = self.models.embedder.embed([new, existing])
                cosine = float(vectors[0] @ vectors[1])
            except MemlsError:
                cosine = None  # the lexical gate; the verdict says "lexical"
        verdict = score_pair(new, existing, similarity=cosine, similarity_kind="cosine")
        if not verdict.contradiction:
            return verdict  # the model is asked only to check a contradiction (as detection)
        model = self.models.pair if self.models is not None else None
        read = PairReader(model, decided)([(new, existing)])
        if not read:
            return verdict
        return score_pair(new, existing, similarity=cosine, meaning=read[0])
