"""The optimised-graph cache of `models.session`: built once, loaded as it is next time, with
the same outputs; a damaged or unwritable cache never stops a model from loading."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from memls.models.locate import packaged_dir
from memls.models.session import batches, check_inputs, open_session, open_tokenizer

FOLDER = packaged_dir("reranker")
pytestmark = pytest.mark.skipif(FOLDER is None, reason="packaged models not installed")


def scores(session) -> np.ndarray:
    tokenizer = open_tokenizer(FOLDER, 128, strategy="only_second")
    encodings = tokenizer.encode_batch(
        [("which port does the api use", "The API listens on 8080"), ("deploys", "Tuesdays")]
    )
    names = check_inputs(session, "reranker")
    out = [session.run(None, feeds)[0][:, 0] for _, feeds in batches(encodings, 2, names, 0)]
    return np.concatenate(out)


def test_the_optimised_graph_is_kept_private_and_gives_the_same_scores(tmp_path):
    cache = tmp_path / "cache"
    plain = scores(open_session(FOLDER, 1))
    first = scores(open_session(FOLDER, 1, cache))
    [kept] = list(cache.iterdir())
    assert kept.suffix == ".onnx" and kept.stat().st_size > 1_000_000
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    mtime = kept.stat().st_mtime_ns
    again = scores(open_session(FOLDER, 1, cache))
    assert kept.stat().st_mtime_ns == mtime  # loaded, not rebuilt
    np.testing.assert_allclose(first, plain, atol=1e-5)
    np.testing.assert_allclose(again, plain, atol=1e-5)
    assert list(cache.glob("*.tmp")) == []


def test_a_damaged_cached_graph_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    open_session(FOLDER, 1, cache)
    [kept] = list(cache.iterdir())
    kept.write_bytes(b"not a model")
    plain = scores(open_session(FOLDER, 1))
    np.testing.assert_allclose(scores(open_session(FOLDER, 1, cache)), plain, atol=1e-5)
    assert kept.stat().st_size > 1_000_000


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_cache_only_costs_the_speed(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o500)
    plain = scores(open_session(FOLDER, 1))
    np.testing.assert_allclose(scores(open_session(FOLDER, 1, cache)), plain, atol=1e-5)
    assert list(cache.iterdir()) == []


def test_a_cache_path_that_is_a_file_only_costs_the_speed(tmp_path):
    cache = tmp_path / "cache"
    cache.write_text("in the way")
    plain = scores(open_session(FOLDER, 1))
    np.testing.assert_allclose(scores(open_session(FOLDER, 1, cache)), plain, atol=1e-5)
