"""The models runtime: one thread pool, one embedder, one reranker, one late-interaction
encoder, one pair model, one status report."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Self

import msgspec

from memls.heap import limit_malloc_arenas
from memls.models.embedder import Embedder, Pooling
from memls.models.late import LateEncoder
from memls.models.pair import PairModel
from memls.models.pool import ModelPool
from memls.models.reranker import Reranker
from memls.models.status import ModelStatus


class ModelsStatus(msgspec.Struct, frozen=True):
    embedder: ModelStatus
    reranker: ModelStatus
    late: ModelStatus | None = None
    pair: ModelStatus | None = None


def rerank_switch(setting: bool, off_by: str | None = None) -> str | None:
    """Why reranking is off, or None when it is on. `off_by` names what switched it off (the
    settings say: `[models] rerank = false` or `MEMLS_RERANK=0`, memls.config)."""
    if setting:
        return None
    return f"reranking is switched off ({off_by or 'setting rerank = false'})"


class ModelRuntime:
    """Owns the models' thread pool. Nothing loads until the first call (or `warm()`).

    Use `runtime.embedder.embed(texts)` / `await runtime.embedder.aembed(texts)` and
    `runtime.reranker.rerank(q, passages)` / `await runtime.reranker.arerank(q, passages)`.
    Unavailable models raise ModelUnavailable; `status()` reports both for health and doctor.
    """

    def __init__(
        self,
        *,
        embedder_dir: str | os.PathLike[str] | None = None,
        reranker_dir: str | os.PathLike[str] | None = None,
        late_dir: str | os.PathLike[str] | None = None,
        pair_dir: str | os.PathLike[str] | None = None,
        rerank: bool = True,
        rerank_off_by: str | None = None,
        intra_op_threads: int = 1,  # the encoders': their two pool workers fill two cores
        rerank_threads: int = 2,  # one batch of pairs at a time: both cores
        max_workers: int = 2,
        embed_max_length: int = 256,
        embed_batch_size: int = 4,  # 4/4 vs 8/8: the same rate, peak RSS -34 MB
        pooling: Pooling = "cls",
        rerank_max_length: int = 128,
        rerank_batch_size: int = 4,  # vs 8: 10 LoCoMo pairs 131 vs 173 ms
        late_max_length: int = 180,
        late_batch_size: int = 4,  # the rate of 8, peak RSS -34 MB (docs/benchmarks.md)
        cache_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        limit_malloc_arenas()
        self.pool = ModelPool(max_workers=max_workers)
        self.embedder = Embedder(
            self.pool,
            model_dir=embedder_dir,
            max_length=embed_max_length,
            batch_size=embed_batch_size,
            intra_op_threads=intra_op_threads,
            cache_dir=cache_dir,
            pooling=pooling,
            clock=clock,
        )
        self.late = LateEncoder(
            self.pool,
            model_dir=late_dir,
            max_length=late_max_length,
            batch_size=late_batch_size,
            intra_op_threads=intra_op_threads,
            cache_dir=cache_dir,
            clock=clock,
        )
        # the contradiction check's reader of meaning: loaded on the first check, after a
        # store is acknowledged; one batch of pairs at a time on both cores
        self.pair = PairModel(
            self.pool,
            model_dir=pair_dir,
            intra_op_threads=rerank_threads,
            cache_dir=cache_dir,
            clock=clock,
        )
        off = rerank_switch(rerank, rerank_off_by)
        self.reranker = Reranker(
            self.pool,
            model_dir=reranker_dir,
            max_length=rerank_max_length,
            batch_size=rerank_batch_size,
            intra_op_threads=rerank_threads,
            cache_dir=cache_dir,
            enabled=off is None,
            disabled_reason=off or "",
            clock=clock,
        )

    def status(self) -> ModelsStatus:
        return ModelsStatus(
            embedder=self.embedder.status(),
            reranker=self.reranker.status(),
            late=self.late.status(),
            pair=self.pair.status(),
        )

    def statuses(self) -> list[ModelStatus]:
        """Every model's status (embedder, reranker, late interaction, pair), for health /
        doctor."""
        return [
            self.embedder.status(),
            self.reranker.status(),
            self.late.status(),
            self.pair.status(),
        ]

    def start_warm(self) -> list[Future[ModelStatus]]:
        """Start loading the models, side by side on the pool; never raises (see `status`)."""
        loads = [self.pool.submit(self.embedder.warm), self.pool.submit(self.late.warm)]
        if self.reranker.enabled:
            loads.append(self.pool.submit(self.reranker.warm))
        return loads

    def warm(self) -> ModelsStatus:
        """Load both now and wait; never raises."""
        for load in self.start_warm():
            load.result()
        return self.status()

    def close(self) -> None:
        self.pool.shutdown(wait=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
