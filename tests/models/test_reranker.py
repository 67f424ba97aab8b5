"""The packaged ONNX cross-encoder, for real (no mocks): scores, batches, long inputs."""

from __future__ import annotations

import numpy as np
import pytest

from memls.models import ModelRuntime, to_probability
from model_helpers import ANSWER, QUERY, UNRELATED


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
