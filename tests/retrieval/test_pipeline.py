"""Hybrid retrieval with the real parts (Chroma, ONNX embedder and cross-encoder): what a query
finds, how it explains it, its modes and settings, and how it degrades."""

from __future__ import annotations

import pytest

from engine_helpers import FACTS, query, store
from memls import protocol as p
from memls.engine import Engine


def test_hybrid_query_finds_by_meaning_and_explains(vengine):
    ids = {t: store(vengine, t).id for t in FACTS}
    assert vengine.flush()
    r = query(vengine, "who is responsible for invoices and payments", explain=True)
    assert r.degraded == []
    top = r.results[0]
    assert top.id == ids[FACTS[2]]
    assert top.explain.vector is not None
    # the default head: the first three, re-scored by the cross-encoder
    assert [h.explain.rerank is not None for h in r.results[:4]] == [True, True, True, False]
    assert top.explain.stage in ("rerank", "fused") and set(top.explain.boosts) == {
        "type",
        "decay",
        "feedback",
    }
    # a pure paraphrase with no shared word is still found (the vector source)
    r = query(vengine, "which JavaScript dependency tool", k=1)
    assert [h.id for h in r.results] == [ids[FACTS[0]]]


def test_a_head_at_the_edge_of_the_first_page_leaves_the_rest_in_place(tmp_path, clock, models):
    """Two pairs at ranks 5 and 6 (`rerank_start` 4): what is above keeps its fused order and
    place; the pair is ordered by the cross-encoder and stays between them and the tail."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text("[retrieval]\nrerank_depth = 2\nrerank_start = 4\n")
    with Engine.open(data, front="test", clock=clock, models=models) as engine:
        for t in FACTS:
            store(engine, t)
        store(engine, "The billing service sends invoices at the end of each month")
        assert engine.flush()
        question = "which port does the API server listen on"
        r = query(engine, question, k=10, explain=True)
        plain = query(engine, question, k=10, explain=True, depth="interactive")
        assert [h.explain.rerank is not None for h in r.results] == [
            i in (4, 5) for i in range(len(r.results))
        ]
        assert [h.id for h in r.results[:4]] == [h.id for h in plain.results[:4]]
        assert {h.id for h in r.results[4:6]} == {h.id for h in plain.results[4:6]}
        assert [h.id for h in r.results[6:]] == [h.id for h in plain.results[6:]]
        edge = r.results[4:6]
        assert edge[0].explain.rerank >= edge[1].explain.rerank or all(
            h.explain.stage == "fused"
            for h in edge  # the gate: no logit looked like an answer
        )


def test_the_head_can_start_at_the_top_with_the_relative_cut(tmp_path, clock, models):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        "[retrieval]\nrerank_depth = 10\nrerank_start = 0\nrerank_relative = 0.1\n"
    )
    with Engine.open(data, front="test", clock=clock, models=models) as engine:
        for t in FACTS:
            store(engine, t)
        assert engine.flush()
        r = query(engine, "which port does the API server listen on", k=10, explain=True)
        assert r.results[0].content == FACTS[1]

        def boosted(hit):
            return hit.explain.fused * __import__("math").prod(hit.explain.boosts.values())

        best = max(boosted(h) for h in r.results)
        scored = [h for h in r.results if h.explain.rerank is not None]
        skipped = [h for h in r.results if h.explain.rerank is None]
        assert scored and skipped  # unrelated facts fall under the cut
        assert r.results[0] in scored
        cut = engine.retrieval.rerank_relative * best
        assert all(boosted(h) >= cut - 1e-6 for h in scored)
        assert all(boosted(h) < cut + 1e-6 for h in skipped)


def test_the_re_rank_depth_is_a_setting(tmp_path, clock, models):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        "[retrieval]\nrerank_depth = 3\nrerank_start = 0\nrerank_relative = 0.0\n"
        "interactive_depth = 2\n"
    )
    with Engine.open(data, front="test", clock=clock, models=models) as engine:
        for t in FACTS:
            store(engine, t)
        assert engine.flush()
        for mode, depth in (("default", 3), ("interactive", 2)):
            r = query(engine, "who owns the billing service", k=10, mode=mode, explain=True)
            assert len(r.results) > depth
            assert sum(h.explain.rerank is not None for h in r.results) == depth
        # a request's own depth still wins over the setting
        r = query(engine, "who owns the billing service", k=10, rerankDepth=4, explain=True)
        assert sum(h.explain.rerank is not None for h in r.results) == 4


@pytest.mark.parametrize(
    "line, field",
    [
        ("rerank_depth = 0", "retrieval.rerank_depth"),
        ("rerank_depth = 2.5", "retrieval.rerank_depth"),
        ("rerank_depth = true", "retrieval.rerank_depth"),
        ("rerank_relative = 1.5", "retrieval.rerank_relative"),
        ('interactive_depth = "six"', "retrieval.interactive_depth"),
        ("lift = 3", "retrieval.lift"),
    ],
)
def test_a_bad_retrieval_setting_is_refused_by_name(tmp_path, line, field):
    from memls.errors import InvalidInput

    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(f"[retrieval]\n{line}\n")
    with pytest.raises(InvalidInput) as caught:
        Engine.open(data, front="test", vectors=False)
    assert caught.value.field == field and "config.toml" in str(caught.value)


def test_interactive_and_lexical_modes(vengine):
    for t in FACTS:
        store(vengine, t)
    vengine.flush()
    inter = query(vengine, "on which day do we deploy", mode="interactive", explain=True)
    assert inter.results[0].content == FACTS[3]
    lex = query(vengine, "Alembic migrations", mode="lexical", explain=True)
    assert lex.results[0].content == FACTS[5]
    assert all(h.explain.vector is None and h.explain.rerank is None for h in lex.results)
    off = query(vengine, "Alembic migrations", rerank=False, explain=True)
    assert off.results and all(h.explain.rerank is None for h in off.results)


def test_missing_embedder_degrades_loudly_to_bm25(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(f'[models]\nembedder_dir = "{tmp_path / "nowhere"}"\n')
    with Engine.open(data) as engine:
        m = store(engine, "Deploys go out on Tuesdays through ArgoCD")
        r = query(engine, "Tuesdays deploys")
        assert [h.id for h in r.results] == [m.id]
        assert any("vector search unavailable" in d for d in r.degraded)
        assert engine.flush(timeout=5) is False  # the outbox keeps the write for later
        stats = engine.stats(p.StatsParams(project="alpha"))
        assert stats.index_pending == 1
        assert any("embedder" in d and "missing" in d for d in stats.degraded)
        doctor = engine.doctor(p.DoctorParams(project="alpha"))
        assert not doctor.ok and doctor.models["embedder"]["state"] == "missing"


def test_rerank_switched_off_by_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLS_RERANK", "0")
    with Engine.open(tmp_path / "data") as engine:
        for t in FACTS:
            store(engine, t)
        engine.flush()
        r = query(engine, "who owns billing", explain=True)
        assert r.results and all(h.explain.rerank is None for h in r.results)
        assert r.degraded == []
        assert (
            engine.doctor(p.DoctorParams(project="alpha")).models["reranker"]["state"] == "disabled"
        )


def test_neighbours_within_four_units_of_a_top_hit_join_the_candidates(vengine):
    """A conversation's turns: the one that matches brings the turns up to 4 places away in
    the same source (not 5), though they share no word with the question; late interaction
    then scores them like any candidate. Depth none keeps radius 3."""
    assert vengine.retrieval.neighbours == 4
    topics = ["gardening", "chess", "sailing", "pottery", "cycling", "baking", "astronomy"]
    for n in range(60):  # other sources, so the candidate lists are not the whole store
        store(vengine, f"Note {n} about {topics[n % len(topics)]} practice and its schedule")
    turns = {}
    for line in range(1, 13):
        text = f"Turn {line}: we talked about the weather and the weekend, nothing else"
        if line == 6:
            text = "Turn 6: the quarterly invoice for the lighthouse repair was paid in March"
        turns[line] = store(
            vengine, text, sourceUri="chat://session-1", sourceRange=f"{line}-{line}"
        ).id
    assert vengine.flush()
    question = "when was the lighthouse repair invoice paid"

    def joined(depth):
        r = query(vengine, question, k=50, explain=True, depth=depth)
        assert r.results[0].id == turns[6]
        came = {h.id for h in r.results if h.explain.bm25 is None and h.explain.vector is None}
        return sorted(line for line, i in turns.items() if i in came)

    # only as neighbours (no shared word, not among the nearest vectors): radius 4
    assert joined("interactive") == [2, 3, 4, 5, 7, 8, 9, 10]
    # without late interaction to judge them (depth none): the narrower radius 3
    assert joined("none") == [3, 4, 5, 7, 8, 9]
