"""Write-time detection: the 10 most similar active, currently valid memories of the same
project (a scoped nearest-neighbour search in the project's own collection, or BM25 in the
project when vectors are off), each scored against the new memory by the pure scorer."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from memls.conflicts.scorer import gate, score_pair
from memls.index.chroma import VectorIndex
from memls.index.chroma import where as chroma_where
from memls.protocol import Verdict
from memls.scope import Visibility
from memls.store.search import SearchQueries

CANDIDATES = 10


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

    def candidates(
        self, rows: list[sqlite3.Row], vectors: Any
    ) -> list[list[tuple[str, float | None]]]:
        """For each new row: (id, cosine or None) of the nearest active, valid-now memories of
        its project, itself excluded. One batched Chroma query with vectors; BM25 without."""
        if not rows:
            return []
        project = rows[0]["project"]
        seen = Visibility(projects=(project,), now=self.now)
        if vectors is not None and self.index is not None:
            found = self.index.nearest(
                project,
                vectors,
                CANDIDATES + 1,
                chroma_where(seen),
                lambda ids: self.reads.admitted(seen, ids),
            )
            near: list[list[tuple[str, float | None]]] = []
            for row, nearest in zip(rows, found):
                kept: list[tuple[str, float | None]] = [
                    (i, s) for i, s in nearest if i != row["id"]
                ]
                near.append(kept[:CANDIDATES])
            return near
        out: list[list[tuple[str, float | None]]] = []
        for row in rows:
            scores = self.reads.bm25(seen, row["content"], CANDIDATES + 1)
            ranked = sorted(scores, key=lambda i: scores[i], reverse=True)
            lexical: list[tuple[str, float | None]] = [(i, None) for i in ranked if i != row["id"]]
            out.append(lexical[:CANDIDATES])
        return out

    def detect_all(self, rows: list[sqlite3.Row], vectors: Any) -> list[list[Finding]]:
        """Findings for each of a batch of new rows of one project."""
        return [self.detect(row, pairs) for row, pairs in zip(rows, self.candidates(rows, vectors))]

    def detect(self, row: sqlite3.Row, pairs: list[tuple[str, float | None]]) -> list[Finding]:
        if not pairs:
            return []
        seen = Visibility(projects=(row["project"],), now=self.now)
        # the hard filters again: Chroma's metadata may lag the record
        rows = self.reads.visible_rows(seen, [i for i, _ in pairs])
        findings = []
        for memory_id, cosine in pairs:
            other = rows.get(memory_id)
            if other is None or (
                (other["recorded_at"], other["seq"]) > (row["recorded_at"], row["seq"])
            ):
                continue  # only what was there before: the later one's own check covers it
            if cosine is not None and gate(cosine, "cosine") == 0.0:
                continue  # too far apart to contradict: the scorer would give 0
            verdict = score_pair(
                row["content"], other["content"], similarity=cosine, similarity_kind="cosine"
            )
            if verdict.contradiction:
                findings.append(Finding(newer=row, older=other, verdict=verdict))
        return findings
