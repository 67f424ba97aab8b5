"""Sentence embeddings: bge-small-en-v1.5 int8 by default (CLS pooling, L2-normalised, 384 d)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from memls.models.lazy import PooledModel
from memls.models.pool import ModelPool
from memls.models.session import Onnx

Pooling = Literal["cls", "mean"]


@dataclass(frozen=True)
class _Loaded:
    onnx: Onnx
    dim: int


class Embedder(PooledModel):
    """`embed(texts) -> float32 [n, dim]`, unit rows. Loads on first call, on the model pool.

    pooling: "cls" for bge (the default model); "mean" for sentence-transformers MiniLM folders.
    A model whose output is already pooled ([batch, dim]) is used as is.
    """

    NAME = "embedder"

    def __init__(
        self,
        pool: ModelPool,
        *,
        model_dir: str | os.PathLike[str] | None = None,
        max_length: int = 256,
        batch_size: int = 32,
        intra_op_threads: int = 2,
        cache_dir: Path | None = None,
        pooling: Pooling = "cls",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pooling = pooling
        super().__init__(
            pool,
            model_dir=model_dir,
            max_length=max_length,
            batch_size=batch_size,
            intra_op_threads=intra_op_threads,
            cache_dir=cache_dir,
            clock=clock,
        )

    # -- public -----------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._pool.run(self._embed_here, list(texts))

    def submit(self, texts: Sequence[str], *, later: bool = False) -> Future[np.ndarray]:
        """Start embedding on the pool (`later`: after any work a caller waits for);
        `.result()` gives what `embed` would."""
        start = self._pool.later if later else self._pool.submit
        return start(self._embed_here, list(texts))

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        return await self._pool.arun(self._embed_here, list(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    async def aembed_query(self, text: str) -> np.ndarray:
        return (await self.aembed([text]))[0]

    # -- on the pool ------------------------------------------------------------------------

    def _embed_here(self, texts: list[str]) -> np.ndarray:
        """Embed in the calling thread (the public methods call this on the pool)."""
        model = self._lazy.get()
        out = np.zeros((len(texts), model.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = model.onnx.tokenizer.encode_batch(texts)
        for index, feeds, hidden in model.onnx.run(encodings, self.batch_size, self.budget):
            out[index] = self._pool_rows(hidden, feeds.get("attention_mask"))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def _pool_rows(self, hidden: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        if hidden.ndim == 2:
            return hidden
        if self.pooling == "cls" or mask is None:
            return hidden[:, 0]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

    def _load(self, folder: Path) -> _Loaded:
        onnx = self._open(folder)
        hidden = onnx.probe("memls")  # tells the model's width
        if hidden.ndim not in (2, 3):
            raise ValueError(f"embedder output {onnx.output_name} has shape {hidden.shape}")
        return _Loaded(onnx, int(hidden.shape[-1]))
