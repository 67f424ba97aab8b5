"""Sentence embeddings: bge-small-en-v1.5 int8 by default (CLS pooling, L2-normalised, 384 d)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from memls.models.lazy import PooledModel
from memls.models.pool import ModelPool
from memls.models.session import batches, check_inputs, open_session, open_tokenizer, pad_id

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

Pooling = Literal["cls", "mean"]


@dataclass(frozen=True)
class _Loaded:
    session: ort.InferenceSession
    tokenizer: Tokenizer
    input_names: list[str]
    output_name: str
    pad: int
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

    def submit(self, texts: Sequence[str]) -> Future[np.ndarray]:
        """Start embedding on the pool; `.result()` gives what `embed` would."""
        return self._pool.submit(self._embed_here, list(texts))

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
        encodings = model.tokenizer.encode_batch(texts)
        for index, feeds in batches(encodings, self.batch_size, model.input_names, model.pad):
            hidden = model.session.run([model.output_name], feeds)[0]
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
        tokenizer = open_tokenizer(folder, self.max_length)
        session = open_session(folder, self.intra_op_threads, self.cache_dir)
        names = check_inputs(session, "embedder")
        output = session.get_outputs()[0].name
        pad = pad_id(tokenizer)
        # one probe run: proves the model works and tells its width
        ((_, probe),) = batches([tokenizer.encode("memls")], 1, names, pad)
        hidden = session.run([output], probe)[0]
        if hidden.ndim not in (2, 3):
            raise ValueError(f"embedder output {output} has shape {hidden.shape}")
        return _Loaded(session, tokenizer, names, output, pad, int(hidden.shape[-1]))
