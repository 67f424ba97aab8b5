"""Finding the memories a batch of new ones restates, after they are acknowledged: the indexer
has just embedded the batch, so one nearest-neighbour query (the vector index) finds, for
every new memory, the nearest active, valid memories of its project recorded before it, and
the batch's own vectors find restatements inside the batch. A pair goes on only when both
are of the same type, their cosine is at least NEAR_COSINE, they share enough content words
(`rule.lexically_close`) and name the same things (`rule.differing_names`); only those pairs
are given to the cross-encoder, and the pure rule (`rule.is_restatement`) decides.

The nearest search is a vector search, not a lexical one: its cost grows with the log of the
project's size (HNSW), and the rule's first gate is a cosine. Without vectors (settings:
[index] vectors = false), or while the embedder or cross-encoder is unavailable, nothing is
merged: only exact duplicates are (a different memory must never be swallowed because a model
was missing)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np

from memls.conflicts.reader import PairReader
from memls.conflicts.scorer import score_pair
from memls.dedup.rule import (
    MEANING_COSINE,
    NEAR_COSINE,
    differing_names,
    is_restatement,
    lexically_close,
    substituted,
)
from memls.index.chroma import VectorIndex
from memls.index.chroma import where as chroma_where
from memls.models import ModelRuntime, ModelUnavailable
from memls.scope import Visibility
from memls.store.search import SearchQueries

NEAREST = 10  # the nearest indexed memories looked at for each new one (any type)


@dataclass(frozen=True)
class NearDuplicates:
    reads: SearchQueries
    index: VectorIndex | None
    models: ModelRuntime | None

    @property
    def enabled(self) -> bool:
        return self.index is not None and self.models is not None and self.models.reranker.enabled

    def restated(
        self, project: str, rows: list[sqlite3.Row], vectors: Any, now: str
    ) -> dict[str, str]:
        """{new id: the id of the memory it restates} for the rows of a batch of `project`
        (their bge vectors in `vectors`, in order) that may be merged: stored through
        memory/store or ingest without `force`, not note units (`SearchQueries.mergeable`).
        A row restated by another of the batch is never itself a target."""
        if not self.enabled or vectors is None or not rows:
            return {}
        mergeable = self.reads.mergeable(project, [r["id"] for r in rows])
        todo = [k for k, r in enumerate(rows) if r["id"] in mergeable]
        if not todo:
            return {}
        assert self.index is not None
        seen = Visibility(projects=(project,), now=now)
        matrix = np.asarray(vectors, dtype=np.float32)
        matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        known: dict[str, sqlite3.Row] = {}

        def admit(ids: list[str]) -> set[str]:
            visible = self.reads.visible_rows(seen, ids)
            known.update(visible)
            return set(visible)

        found = self.index.nearest(project, matrix[todo], NEAREST, chroma_where(seen), admit)
        mates = self.reads.visible_rows(seen, [r["id"] for r in rows])
        sims = matrix @ matrix.T
        out: dict[str, str] = {}
        try:
            for j, k in enumerate(todo):
                row = rows[k]
                pairs = [(s, i) for i, s in found[j] if i in known and i != row["id"]]
                pairs += [
                    (float(sims[k, m]), other["id"])
                    for m, other in enumerate(rows)
                    if m != k and other["id"] in mates
                ]
                target = self._best(row, pairs, {**mates, **known}, out)
                if target is not None:
                    out[row["id"]] = target
        except ModelUnavailable:
            return {}
        return out

    def _best(
        self,
        row: sqlite3.Row,
        pairs: list[tuple[float, str]],
        rows: dict[str, sqlite3.Row],
        merged: dict[str, str],
    ) -> str | None:
        """The closest memory that `row` restates among `pairs` (cosine, id), or None."""
        text = row["content"]
        floor = min(NEAR_COSINE, MEANING_COSINE)  # the pair model's way in starts lower
        for score, memory_id in sorted(pairs, reverse=True):
            if score < floor:
                break
            other = rows[memory_id]
            if memory_id in merged or other["type"] != row["type"] or not _before(other, row):
                continue
            existing = other["content"]
            if not lexically_close(existing, text) or differing_names(existing, text):
                continue
            if (
                substituted(existing, text)
                or score_pair(text, existing, similarity=score).contradiction
            ):
                continue  # the rule's pure tests first: the cross-encoder is its dearest
            assert self.models is not None
            read = PairReader(self.models.pair)([(text, existing)])
            meaning = read[0] if read else None
            cross = self._cross(existing, text) if score >= NEAR_COSINE else 0.0
            if is_restatement(existing, text, cosine=score, cross=cross, meaning=meaning):
                return str(memory_id)
        return None

    def _cross(self, existing: str, new: str) -> float:
        """The cross-encoder probability, mean of both directions (as the rule was chosen)."""
        assert self.models is not None
        reranker = self.models.reranker
        return (
            float(reranker.probabilities(existing, [new])[0])
            + float(reranker.probabilities(new, [existing])[0])
        ) / 2


def _before(other: sqlite3.Row, row: sqlite3.Row) -> bool:
    """`other` was in the store when `row` came (by insertion, not by recorded time: a memory
    imported from another tool's store keeps the time its source recorded it)."""
    return bool(other["seq"] < row["seq"])
