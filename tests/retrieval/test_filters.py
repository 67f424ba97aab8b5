"""The hard filters (project, trust, status, valid and transaction time) hold in every
candidate source: BM25, the vector search and the fused query."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import store
from memls import protocol as p
from memls.engine import Engine
from memls.retrieval.pipeline import Retriever


def _retriever(engine):
    """The engine's own retrieval collaborators, as a query gets them."""
    return Retriever(engine.storage.search, engine.index, engine.models, engine.retrieval)


PROJECTS = ["alpha", "beta", "@user"]
WORDS = ["cache", "deploy", "billing", "tests", "docker", "python"]


def _visible(row: dict, seen) -> bool:
    if row["project"] not in seen.projects or row["trust"] not in ("candidate", "verified"):
        return False
    vf, vu = row["valid_from"], row["valid_until"]
    if seen.valid_at is None and seen.as_of is None:
        return row["status"] == "active" and vf <= seen.now and (vu is None or vu > seen.now)
    ok = True
    if seen.valid_at is not None:
        ok &= vf <= seen.valid_at and (vu is None or vu > seen.valid_at)
    if seen.as_of is not None:
        inv = row["invalidated_at"]
        ok &= row["recorded_at"] <= seen.as_of and (inv is None or inv > seen.as_of)
    return ok


@pytest.fixture(scope="module")
def filter_engine(tmp_path_factory, models):
    """One engine with memories in every state, over three projects."""
    import random

    rng = random.Random(7)
    with Engine.open(tmp_path_factory.mktemp("filters"), models=models) as engine:
        for i in range(60):
            project = PROJECTS[i % 3]
            words = " ".join(rng.sample(WORDS, 3))
            year = 2020 + rng.randrange(8)
            r = engine.store(
                p.StoreParams(
                    text=f"Memory {i} about {words}",
                    project=project,
                    valid_from=f"{year}-0{1 + rng.randrange(9)}-01",
                    valid_until=f"{year + 2}-01-01" if rng.random() < 0.2 else None,
                )
            )
            if rng.random() < 0.2:
                for _ in range(2):
                    engine.feedback(p.FeedbackParams(id=r.id, signal="outdated", project=project))
            elif rng.random() < 0.1:
                engine.review(p.ReviewParams(action="reject", id=r.id, project=project))
        for project in PROJECTS:  # a supersession chain in each project
            old = engine.store(
                p.StoreParams(
                    text="We cache with memcached", project=project, valid_from="2021-01-01"
                )
            )
            new = engine.store(
                p.StoreParams(
                    text="We cache with redis now", project=project, valid_from="2023-01-01"
                )
            )
            engine.supersede(p.SupersedeParams(old=old.id, by=new.id, project=project))
        assert engine.flush(timeout=300)
        yield engine


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    project=st.sampled_from(["alpha", "beta"]),
    words=st.lists(st.sampled_from(WORDS + ["memcached", "redis"]), min_size=1, max_size=3),
    valid_at=st.one_of(
        st.none(),
        st.dates(
            min_value=__import__("datetime").date(2019, 1, 1),
            max_value=__import__("datetime").date(2030, 1, 1),
        ),
    ),
    as_of=st.one_of(st.none(), st.just("2020-01-01"), st.just("2999-01-01")),
    include_user=st.booleans(),
)
def test_no_candidate_source_yields_a_filtered_memory(
    filter_engine, project, words, valid_at, as_of, include_user
):
    engine = filter_engine
    text = " ".join(words)
    seen = engine.visibility(
        project, valid_at=valid_at and valid_at.isoformat(), as_of=as_of, include_user=include_user
    )
    rows = {
        r["id"]: dict(r)
        for r in engine.db.read(
            "SELECT id, project, status, trust, valid_from, valid_until, recorded_at, "
            "invalidated_at FROM memories"
        )
    }
    allowed = {i for i, row in rows.items() if _visible(row, seen)}
    for source in (
        _retriever(engine).lexical(seen, text, 200),
        _retriever(engine).vector(seen, text, 200),
    ):
        assert set(source) <= allowed
    result = engine.query(
        p.QueryParams(
            query=text,
            project=project,
            k=50,
            valid_at=valid_at and valid_at.isoformat(),
            as_of=as_of,
            include_user=include_user,
        )
    )
    assert {h.id for h in result.results} <= allowed
    # and nothing visible was lost by the vector filter: it returns every allowed memory
    # when asked for enough
    got = set(_retriever(engine).vector(seen, text, 200))
    assert got == allowed, (sorted(allowed - got), sorted(got - allowed))


def test_vector_search_reaches_past_filtered_nearest_neighbours(vengine):
    """The nearest memories are flagged: the unfiltered fast path finds none that pass, and
    the filtered search still returns the nearest one that does."""
    flagged = [
        store(vengine, f"We cache sessions with memcached, variant {i}", "nn").id for i in range(4)
    ]
    keep = store(vengine, "Deploys go out on Fridays", "nn").id
    for memory_id in flagged:
        for _ in range(3):
            vengine.feedback(p.FeedbackParams(id=memory_id, signal="outdated", project="nn"))
    assert vengine.flush(timeout=120)
    seen = vengine.visibility("nn", valid_at=None, as_of=None, include_user=False)
    assert list(_retriever(vengine).vector(seen, "memcached session cache", 1)) == [keep]


_VECTORS: dict[str, object] = {}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    project=st.sampled_from(["alpha", "beta"]),
    words=st.lists(st.sampled_from(WORDS + ["memcached", "redis"]), min_size=1, max_size=3),
    valid_at=st.one_of(st.none(), st.just("2021-06-01"), st.just("2024-06-01")),
    include_user=st.booleans(),
    n=st.sampled_from([1, 2, 5, 12]),
)
def test_vector_candidates_are_the_nearest_that_pass_the_filters(
    filter_engine, project, words, valid_at, include_user, n
):
    """The fast path (unfiltered search, SQL filter) and its fallback (Chroma `where`, taken
    when too few of the 2n nearest pass) both return the n nearest allowed memories."""
    import numpy as np

    engine = filter_engine
    text = " ".join(words)
    seen = engine.visibility(project, valid_at=valid_at, as_of=None, include_user=include_user)
    rows = {
        r["id"]: dict(r)
        for r in engine.db.read(
            "SELECT id, project, status, trust, valid_from, valid_until, recorded_at, "
            "invalidated_at, content FROM memories"
        )
    }
    if not _VECTORS:  # the stored vectors (the int8 embedder's output varies with its batch)
        for name in PROJECTS:
            got = engine.index.existing(name).get(include=["embeddings"])
            _VECTORS.update(zip(got["ids"], got["embeddings"]))
    query = engine.models.embedder.embed([text])[0]
    found = _retriever(engine).vector(seen, text, n)
    for project_ in seen.projects:
        allowed = sorted(
            (i for i, row in rows.items() if row["project"] == project_ and _visible(row, seen)),
            key=lambda i: -float(np.dot(_VECTORS[i], query)),
        )
        got = [i for i in found if rows[i]["project"] == project_]
        assert set(got) <= set(allowed)
        assert len(got) == min(n, len(allowed))
        if len(allowed) > n:  # nothing nearer was left out (HNSW is exact at this size)
            worst = min(float(np.dot(_VECTORS[i], query)) for i in got)
            assert float(np.dot(_VECTORS[allowed[n]], query)) <= worst + 1e-3
