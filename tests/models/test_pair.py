"""The pair model (all-MiniLM-L6-v2 fine-tuned here, int8 ONNX inside memls's own package):
found offline in the package, loaded on first use, reads a contradiction, a restatement and
two subjects that differ only by their number; a missing model is reported, never replaced."""

from __future__ import annotations

import numpy as np
import pytest

from memls.models import ModelPool, ModelUnavailable, PairModel
from memls.models.locate import locate
from memls.models.pair import LABELS

C, E, N = (LABELS.index(x) for x in ("contradiction", "entailment", "neutral"))


@pytest.fixture(scope="module")
def pair(runtime):
    return runtime.pair


def test_the_model_ships_inside_memls():
    where = locate("pair")
    assert where.error is None and where.source == "packaged"
    assert where.path is not None and where.path.parts[-4:] == ("memls", "models", "data", "pair")
    assert (where.path / "model.onnx").stat().st_size < 40_000_000  # int8, not the fp32 export


def test_it_loads_lazily_and_reads_each_kind_of_pair(pair):
    assert pair.status().state in ("not_loaded", "loaded")
    probs = pair.classify(
        [
            ("The service needs Java 17.", "The service needs Java 21."),
            (
                "We use pytest for all Python tests.",
                "All of our Python tests are written with pytest.",
            ),
            ("Module 3 is owned by the payments team.", "Module 4 is owned by the payments team."),
        ]
    )
    assert pair.status().state == "loaded"
    assert probs.shape == (3, 3) and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-4)
    assert np.argmax(probs[0]) == C, probs[0]
    assert np.argmax(probs[1]) == E, probs[1]
    assert np.argmax(probs[2]) == N, probs[2]  # two modules, not one value changed


def test_a_batch_reads_as_its_pairs_one_by_one(pair):
    pairs = [
        ("Deploys run on Fridays.", "Deploys never run on Fridays."),
        ("The cache is Redis.", "Redis holds the cache."),
    ]
    batched = pair.classify(pairs)
    alone = np.vstack([pair.classify([p]) for p in pairs])
    np.testing.assert_allclose(batched, alone, atol=0.08)  # int8 activations are per batch
    assert pair.classify([]).shape == (0, 3)


def test_a_missing_model_is_reported_and_never_replaced(tmp_path):
    pool = ModelPool(max_workers=1)
    try:
        model = PairModel(pool, model_dir=tmp_path / "nowhere")
        status = model.status()
        assert status.state == "missing" and "nowhere" in (status.error or "")
        with pytest.raises(ModelUnavailable, match="pair"):
            model.classify([("a", "b")])
    finally:
        pool.shutdown()


def test_health_lists_the_pair_model(runtime):
    assert [s.name for s in runtime.statuses()][-1] == "pair"
    assert runtime.status().pair is not None
