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
from typing import TYPE_CHECKING

import numpy as np

from memls.models.lazy import PooledModel
from memls.models.session import batches, check_inputs, open_session, open_tokenizer, pad_id

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

LABELS = ("contradiction", "entailment", "neutral")


@dataclass(frozen=True)
class _Loaded:
    session: ort.InferenceSession
    tokenizer: Tokenizer
    input_names: list[str]
    output_name: str
    pad: int
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
        encodings = model.tokenizer.encode_batch(pairs)
        for index, feeds in batches(encodings, self.batch_size, model.input_names, model.pad):
            logits = model.session.run([model.output_name], feeds)[0]
            out[index] = softmax(logits.astype(np.float64))[:, model.order]
        return out

    def _load(self, folder: Path) -> _Loaded:
        tokenizer = open_tokenizer(folder, self.max_length)
        session = open_session(folder, self.intra_op_threads, self.cache_dir)
        names = check_inputs(session, "pair")
        output = session.get_outputs()[0]
        labels = json.loads((folder / "labels.json").read_text())["labels"]
        if sorted(labels) != sorted(LABELS):
            raise ValueError(f"pair model labels {labels}: expected {list(LABELS)}")
        pad = pad_id(tokenizer)
        ((_, probe),) = batches([tokenizer.encode("memls", "memory")], 1, names, pad)
        logits = session.run([output.name], probe)[0]
        if logits.shape != (1, len(LABELS)):
            raise ValueError(f"pair output {output.name} has shape {logits.shape}, want [batch, 3]")
        return _Loaded(
            session, tokenizer, names, output.name, pad, [labels.index(x) for x in LABELS]
        )
