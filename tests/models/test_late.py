"""The late-interaction encoder (answerai-colbert-small-v1, the packaged ONNX file): content
tokens only, unit rows, stored compactly, MaxSim that prefers the answer; a missing model is
reported, never replaced."""

from __future__ import annotations

import numpy as np
import pytest

from memls.models import LateEncoder, ModelPool, ModelUnavailable
from memls.models.late import maxsim, maxsim_packed, pack, unpack
from model_helpers import ANSWER, QUERY, UNRELATED


@pytest.fixture(scope="module")
def late(runtime):
    return runtime.late


def test_token_vectors_are_unit_rows_of_content_tokens(late):
    plain, punctuated = late.encode(
        ["deploys go out on tuesdays", "deploys -- go out, on tuesdays!!"]
    )
    assert plain.shape[1] == 384 == late.dim
    # [CLS], [SEP] and the punctuation are dropped: both texts keep the same tokens
    assert len(plain) == len(punctuated) >= 5
    assert np.allclose(np.linalg.norm(plain.astype(np.float32), axis=1), 1.0, atol=1e-2)
    assert late.status().state == "loaded"


def test_maxsim_prefers_the_answer(late):
    (query,) = late.encode([QUERY])
    docs = late.encode([UNRELATED, ANSWER])
    scores = maxsim(query, docs)
    assert scores[1] > scores[0] + 0.1 * len(query)
    # one candidate at a time gives the same as the batched product
    alone = [maxsim(query, [d])[0] for d in docs]
    assert np.allclose(scores, alone, atol=1e-4)
    assert maxsim(query, [])[0:0].shape == (0,)


def test_stored_form_is_int8_and_keeps_the_ranking(late):
    (query,) = late.encode([QUERY])
    docs = late.encode([UNRELATED, ANSWER])
    blobs = [pack(d) for d in docs]
    assert all(len(b) == len(d) * (384 + 2) for b, d in zip(blobs, docs))
    back = [unpack(b, 384) for b in blobs]
    for d, b in zip(docs, back):
        cos = (d.astype(np.float32) * b).sum(axis=1)
        assert cos.min() > 0.99
    assert np.argmax(maxsim(query, back)) == 1


def test_a_missing_model_is_reported_and_never_replaced(tmp_path):
    pool = ModelPool(max_workers=1)
    try:
        late = LateEncoder(pool, model_dir=tmp_path / "nowhere")
        status = late.status()
        assert status.state == "missing" and "nowhere" in (status.error or "")
        with pytest.raises(ModelUnavailable, match="late"):
            late.encode(["anything"])
    finally:
        pool.shutdown()


def test_maxsim_over_packed_blobs_equals_maxsim_over_unpacked_rows():
    rng = np.random.default_rng(7)
    docs = [rng.standard_normal((n, 384)).astype(np.float32) for n in (5, 1, 40, 12)]
    docs = [d / np.linalg.norm(d, axis=1, keepdims=True) for d in docs]
    blobs = [pack(d) for d in docs] + [b""]
    query = rng.standard_normal((7, 384)).astype(np.float32)
    query /= np.linalg.norm(query, axis=1, keepdims=True)
    packed = maxsim_packed(query, blobs, 384)
    plain = maxsim(query, [unpack(b, 384) for b in blobs[:-1]])
    np.testing.assert_allclose(packed[:-1], plain, rtol=1e-5, atol=1e-5)
    assert packed[-1] == 0.0
    assert maxsim_packed(query, [], 384).shape == (0,)
