"""The pair model: does one statement contradict, entail or say nothing about another?

all-MiniLM-L6-v2 fine-tuned with a 3-way head (training/pair_model.py: on SNLI and on pairs in
the style of project notes), int8 ONNX, shipped inside memls (models/data/pair/). Output per
(premise, hypothesis): probabilities of (contradiction, entailment, neutral), softmax of its
logits. It reads the two texts in order: callers that want a symmetric reading ask both.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memls.models.lazy import PooledModel
from memls.models.session import Onnx

LABELS = ("contradiction", "entailment", "neutral")


@dataclass(frozen=True)
class _Loaded:
    onnx: Onnx
    order: list[int]  # column of each of LABELS in the model's output


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=-1, keepdims=True)


class PairModel(PooledModel):
    """`classify(pairs) -> float32 [n, 3]`: (contradiction, entailment, neutral) per pair."""

    NAME = "pair"
    MAX_LENGTH = 128
    BATCH_SIZE = 8

    def classify(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return self._pool.run(self._classify_here, list(pairs))

    async def aclassify(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return await self._pool.arun(self._classify_here, list(pairs))

    def _classify_here(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        model = self._lazy.get()
        out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
        if not pairs:
            return out
        encodings = model.onnx.tokenizer.encode_batch(pairs)
        for index, _, logits in model.onnx.run(encodings, self.batch_size):
            out[index] = softmax(logits.astype(np.float64))[:, model.order]
        return out

    def _load(self, folder: Path) -> _Loaded:
        onnx = self._open(folder)
        labels = json.loads((folder / "labels.json").read_text())["labels"]
        if sorted(labels) != sorted(LABELS):
            raise ValueError(f"pair model labels {labels}: expected {list(LABELS)}")
        logits = onnx.probe("memls", "memory")
        if logits.shape != (1, len(LABELS)):
            raise ValueError(
                f"pair output {onnx.output_name} has shape {logits.shape}, want [batch, 3]"
            )
        return _Loaded(onnx, [labels.index(x) for x in LABELS])
