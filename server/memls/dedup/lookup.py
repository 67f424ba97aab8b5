"""Finding the memory a new one restates: candidates of the same project and type (the
nearest in the vector index, and the best BM25 matches, which include memories not indexed
yet), their cosines, then the pure rule (`rule.is_restatement`) on the closest. The cross-
encoder runs only for candidates that pass the cheaper tests, so most stores make one
embedding and no cross-encoder pair.

Without vectors (settings: [index] vectors = false), or while the embedder or cross-encoder
is unavailable, nothing is merged: only exact duplicates are (a different memory must never
be swallowed because a model was missing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from memls.dedup.rule import NEAR_COSINE, differing_names, is_restatement
from memls.index.chroma import VectorIndex
from memls.index.chroma import where as chroma_where
from memls.models import ModelRuntime, ModelUnavailable
from memls.scope import Visibility
from memls.store.search import SearchQueries

CANDIDATES = 5  # of each source: the nearest vectors, the best BM25 matches


@dataclass(frozen=True)
class NearDuplicates:
    reads: SearchQueries
    index: VectorIndex | None
    models: ModelRuntime | None

    def find(self, project: str, text: str, type_: str, now: str) -> str | None:
        """The id of the active, valid memory of `project` and `type_` that `text` restates,
        or None."""
        if self.index is None or self.models is None or not self.models.reranker.enabled:
            return None
        seen = Visibility(projects=(project,), now=now, types=(type_,))
        try:
            vector = self.models.embedder.embed([text])[0]
        except ModelUnavailable:
            return None
        near = self.index.nearest(
            project,
            [vector],
            CANDIDATES,
            chroma_where(seen),
            lambda ids: set(self.reads.visible_rows(seen, ids)),
        )[0]
        cosine = dict(near)
        lexical = self.reads.bm25(seen, text, CANDIDATES)
        ids = list(dict.fromkeys([*cosine, *lexical]))
        rows = self.reads.visible_rows(seen, ids)
        missing = [i for i in ids if i in rows and i not in cosine]
        if missing:
            cosine.update(self.index.cosines(project, vector, missing))
            unindexed = [i for i in missing if i not in cosine]
            if unindexed:
                cosine.update(
                    self._cosines(vector, [rows[i]["content"] for i in unindexed], unindexed)
                )
        close = sorted(
            (
                (score, i)
                for i, score in cosine.items()
                if i in rows
                and score >= NEAR_COSINE
                and not differing_names(rows[i]["content"], text)
            ),
            reverse=True,
        )
        for score, memory_id in close:
            existing = rows[memory_id]["content"]
            try:
                cross = self._cross(existing, text)
            except ModelUnavailable:
                return None
            if is_restatement(existing, text, cosine=score, cross=cross):
                return memory_id
        return None

    def _cosines(self, vector: Any, texts: list[str], ids: list[str]) -> dict[str, float]:
        assert self.models is not None
        try:
            matrix = self.models.embedder.embed(texts)
        except ModelUnavailable:
            return {}
        sims = np.asarray(matrix, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
        return {i: float(s) for i, s in zip(ids, sims)}

    def _cross(self, existing: str, new: str) -> float:
        """The cross-encoder probability, mean of both directions (as the rule was chosen)."""
        assert self.models is not None
        reranker = self.models.reranker
        return (
            float(reranker.probabilities(existing, [new])[0])
            + float(reranker.probabilities(new, [existing])[0])
        ) / 2
