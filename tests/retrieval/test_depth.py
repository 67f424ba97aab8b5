"""Depth per request: none (BM25 + vectors), interactive (+ late interaction), default (+ the
cross-encoder on the uncertain head); each applies the hard filters like every other path."""

from __future__ import annotations

import msgspec
import pytest

from engine_helpers import FACTS, store
from memls import protocol as p
from memls.retrieval.pipeline import depth_of


class DepthParams(p.QueryParams, kw_only=True):
    """QueryParams with the `depth` field the query front adds (read with getattr)."""

    depth: str | None = None


def test_depth_comes_from_the_request_or_its_mode():
    assert depth_of(p.QueryParams(query="q")) == "default"
    assert depth_of(p.QueryParams(query="q", mode="interactive")) == "interactive"
    assert depth_of(p.QueryParams(query="q", mode="lexical")) == "lexical"
    assert depth_of(DepthParams(query="q", depth="none")) == "none"
    assert depth_of(DepthParams(query="q", mode="lexical", depth="default")) == "lexical"


@pytest.mark.parametrize("depth", ["none", "interactive", "default"])
def test_every_depth_returns_filtered_results_only(vengine, depth):
    ids = {t: store(vengine, t).id for t in FACTS}
    hidden = store(vengine, "Alice also owns the billing database backups", validFrom="2999-01-01")
    other = store(vengine, "Alice owns the billing service", project="beta").id
    rejected = store(vengine, "Bob owns the billing service and its alerts").id
    vengine.review(p.ReviewParams(action="reject", id=rejected, project="alpha"))
    assert vengine.flush()
    seen = vengine.visibility("alpha", valid_at=None, as_of=None, include_user=False)
    params = DepthParams(
        query="who owns the billing service", project="alpha", k=10, depth=depth, explain=True
    )
    from memls.retrieval.pipeline import Retriever

    r = Retriever(vengine.storage.search, vengine.index, vengine.models, vengine.retrieval)
    result = r.search(params, seen)
    got = [h.id for h in result.results]
    assert result.degraded == []
    assert got[0] == ids[FACTS[2]]
    assert set(got) <= set(ids.values())
    assert hidden.id not in got and other not in got and rejected not in got
    reranked = [h for h in result.results if h.explain.rerank is not None]
    assert bool(reranked) == (depth == "default")
    msgspec.json.encode(result)
