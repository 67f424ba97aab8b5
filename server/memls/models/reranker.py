"""Cross-encoder re-scoring: ms-marco-MiniLM-L-12-v2 int8 by default; raw logits.

Pairs are tokenised once, sorted by length and run in batches padded to their longest member,
so padding stays small; scores come back in the caller's order. The int8 model quantises
activations per batch: a pair's logit moves by up to ~0.25 with its batch companions.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memls.models.lazy import LazyModel, PooledModel
from memls.models.pool import ModelPool
from memls.models.session import Onnx, open_tokenizer

if TYPE_CHECKING:
    from tokenizers import Tokenizer

SPECIAL_TOKENS = 3  # [CLS] query [SEP] passage [SEP]


def to_probability(logits: np.ndarray | float) -> np.ndarray:
    """Sigmoid of ms-marco logits: the relevance probability the model was trained to output."""
    return 1.0 / (1.0 + np.exp(-np.asarray(logits, dtype=np.float64)))


@dataclass(frozen=True)
class _Loaded:
    onnx: Onnx  # its tokenizer truncates only the passage, to max_length
    queries: Tokenizer  # no truncation: measures and cuts over-long queries


class Reranker(PooledModel):
    """`rerank(query, passages) -> float32 [n]` raw logits, higher = more relevant.

    The query is kept whole up to `max_query_tokens` (default: half the pair length) and the
    passage truncated so the pair fits `max_length` tokens. `enabled=False` reports "disabled".
    """

    NAME = "reranker"

    def __init__(
        self,
        pool: ModelPool,
        *,
        model_dir: str | os.PathLike[str] | None = None,
        max_length: int = 128,
        max_query_tokens: int | None = None,
        batch_size: int = 16,
        intra_op_threads: int = 2,
        cache_dir: Path | None = None,
        enabled: bool = True,
        disabled_reason: str = "reranking is switched off",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._pool = pool
        self.max_length = max_length
        room = max_length - SPECIAL_TOKENS - 1  # leave at least one passage token
        if room < 1:
            raise ValueError(f"reranker max_length {max_length} is too small")
        self.max_query_tokens = min(max_query_tokens or room // 2, room)
        self.batch_size = batch_size
        self.intra_op_threads = intra_op_threads
        self.cache_dir = cache_dir  # optimised graphs kept here (models.session)
        self.enabled = enabled
        self._lazy: LazyModel[_Loaded] = LazyModel(
            self.NAME,
            self._load,
            configured=model_dir,
            clock=clock,
            disabled_reason=None if enabled else disabled_reason,
        )

    # -- public -----------------------------------------------------------------------------

    def rerank(self, query: str, passages: Sequence[str]) -> np.ndarray:
        return self._pool.run(self._rerank_here, query, list(passages))

    async def arerank(self, query: str, passages: Sequence[str]) -> np.ndarray:
        return await self._pool.arun(self._rerank_here, query, list(passages))

    def probabilities(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """Relevance probabilities (sigmoid of the logits), e.g. for the contradiction scorer."""
        return to_probability(self.rerank(query, passages))

    # -- on the pool ------------------------------------------------------------------------

    def _rerank_here(self, query: str, passages: list[str]) -> np.ndarray:
        model = self._lazy.get()
        scores = np.zeros(len(passages), dtype=np.float32)
        if not passages:
            return scores
        query = self._cap_query(model.queries, query)
        encodings = model.onnx.tokenizer.encode_batch([(query, p) for p in passages])
        for index, _, logits in model.onnx.run(encodings, self.batch_size):
            scores[index] = logits[:, 0]
        return scores

    def _cap_query(self, tokenizer: Tokenizer, query: str) -> str:
        """Cut the query text after max_query_tokens tokens (only_second truncation cannot
        shorten the query, and fails when the query alone overflows the pair)."""
        encoding = tokenizer.encode(query, add_special_tokens=False)
        if len(encoding.ids) <= self.max_query_tokens:
            return query
        return query[: encoding.offsets[self.max_query_tokens - 1][1]]

    def _load(self, folder: Path) -> _Loaded:
        onnx = self._open(folder, strategy="only_second")
        logits = onnx.probe("memls", "memory")
        if logits.shape != (1, 1):
            raise ValueError(
                f"reranker output {onnx.output_name} has shape {logits.shape}, want [batch, 1]"
            )
        return _Loaded(onnx, open_tokenizer(folder, None))
