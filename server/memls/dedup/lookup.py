"""Finding the memory a new one restates: the best BM25 matches of the same project and type
(read from SQLite, so memories not indexed yet are among them), those that share enough
content words (`rule.lexically_close`), then their cosines to the new text and the pure rule
(`rule.is_restatement`, with the pair model's reading when it runs). A model is asked only
when a candidate is that close: most stores make no embedding and no cross-encoder pair.

Without vectors (settings: [index] vectors = false), or while the embedder or cross-encoder
is unavailable, nothing is merged: only exact duplicates are (a different memory must never
be swallowed because a model was missing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from memls.conflicts.reader import PairReader
from memls.dedup.rule import (
    MEANING_COSINE,
    NEAR_COSINE,
    differing_names,
    is_restatement,
    lexically_close,
)
from memls.index.chroma import VectorIndex
from memls.models import ModelRuntime, ModelUnavailable
from memls.scope import Visibility
from memls.store.search import SearchQueries

CANDIDATES = 5  # the best BM25 matches looked at


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
        ranked = self.reads.bm25(seen, text, CANDIDATES)
        rows = self.reads.visible_rows(seen, ranked)
        close = [
            i
            for i, row in rows.items()
            if lexically_close(row["content"], text) and not differing_names(row["content"], text)
        ]
        if not close:
            return None
        try:
            vector = self.models.embedder.embed([text])[0]
            cosine = self.index.cosines(project, vector, close)
            unindexed = [i for i in close if i not in cosine]
            if unindexed:
                cosine.update(
                    self._cosines(vector, [rows[i]["content"] for i in unindexed], unindexed)
                )
            floor = min(NEAR_COSINE, MEANING_COSINE)
            near = sorted(((s, i) for i, s in cosine.items() if s >= floor), reverse=True)
            read = PairReader(self.models.pair)([(text, rows[i]["content"]) for _, i in near])
            for k, (score, memory_id) in enumerate(near):
                existing = rows[memory_id]["content"]
                cross = self._cross(existing, text) if score >= NEAR_COSINE else 0.0
                meaning = read[k] if read else None
                if is_restatement(existing, text, cosine=score, cross=cross, meaning=meaning):
                    return memory_id
        except ModelUnavailable:
            return None
        return None

    def _cosines(self, vector: Any, texts: list[str], ids: list[str]) -> dict[str, float]:
        assert self.models is not None
        matrix = self.models.embedder.embed(texts)
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
