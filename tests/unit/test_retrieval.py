"""Hybrid retrieval with the real parts: Chroma (embedded and server), ONNX models, outbox."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_helpers import free_port, wait_for_port
from memls import protocol as p
from memls import timeutil
from memls.engine import Engine

from memls.retrieval.pipeline import Retriever

FACTS = [
    "We use pnpm for package management in the monorepo",
    "The API server listens on port 8080 in development",
    "Alice owns the billing service and its on-call rotation",
    "Deploys go out on Tuesdays through ArgoCD",
    "Never commit secrets; they are encrypted with sops",
    "Database migrations are written with Alembic",
]


def _retriever(engine):
    """The engine's own retrieval collaborators, as a query gets them."""
    return Retriever(engine.storage.search, engine.index, engine.models, engine.retrieval)


def store(engine, text, project="alpha", **kw):
    return engine.store(p.parse(p.StoreParams, {"text": text, "project": project, **kw}))


def query(engine, text, project="alpha", **kw):
    return engine.query(p.parse(p.QueryParams, {"query": text, "project": project, **kw}))


def test_hybrid_query_finds_by_meaning_and_explains(vengine):
    ids = {t: store(vengine, t).id for t in FACTS}
    assert vengine.flush()
    r = query(vengine, "who is responsible for invoices and payments", explain=True)
    assert r.degraded == []
    top = r.results[0]
    assert top.id == ids[FACTS[2]]
    assert top.explain.vector is not None and top.explain.rerank is not None
    assert top.explain.stage in ("rerank", "fused") and set(top.explain.boosts) == {
        "type", "decay", "feedback"}
    # a pure paraphrase with no shared word is still found (the vector source)
    r = query(vengine, "which JavaScript dependency tool", k=1)
    assert [h.id for h in r.results] == [ids[FACTS[0]]]


def test_only_candidates_near_the_best_go_to_the_cross_encoder(vengine):
    for t in FACTS:
        store(vengine, t)
    assert vengine.flush()
    r = query(vengine, "which port does the API server listen on", k=10, explain=True)
    assert r.results[0].content == FACTS[1]
    def boosted(hit):
        return hit.explain.fused * __import__("math").prod(hit.explain.boosts.values())
    best = max(boosted(h) for h in r.results)
    scored = [h for h in r.results if h.explain.rerank is not None]
    skipped = [h for h in r.results if h.explain.rerank is None]
    assert scored and skipped  # unrelated facts fall under the cut
    cut = vengine.retrieval.rerank_relative * best
    assert all(boosted(h) >= cut - 1e-6 for h in scored)
    assert all(boosted(h) < cut + 1e-6 for h in skipped)


def test_the_re_rank_depth_is_a_setting(tmp_path, clock, models):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        "[retrieval]\nrerank_depth = 2\nrerank_relative = 0.0\ninteractive_depth = 1\n")
    with Engine.open(data, front="test", clock=clock, models=models) as engine:
        for t in FACTS:
            store(engine, t)
        assert engine.flush()
        for mode, depth in (("default", 2), ("interactive", 1)):
            r = query(engine, "who owns the billing service", k=10, mode=mode, explain=True)
            assert len(r.results) > depth
            assert sum(h.explain.rerank is not None for h in r.results) == depth
        # a request's own depth still wins over the setting
        r = query(engine, "who owns the billing service", k=10, rerankDepth=4, explain=True)
        assert sum(h.explain.rerank is not None for h in r.results) == 4


@pytest.mark.parametrize("line, field", [
    ("rerank_depth = 0", "retrieval.rerank_depth"),
    ("rerank_depth = 2.5", "retrieval.rerank_depth"),
    ("rerank_depth = true", "retrieval.rerank_depth"),
    ("rerank_relative = 1.5", "retrieval.rerank_relative"),
    ("interactive_depth = \"six\"", "retrieval.interactive_depth"),
    ("lift = 3", "retrieval.lift"),
])
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
    assert all(h.explain.rerank is None for h in off.results)


def test_outbox_keeps_chroma_in_step_with_every_write(vengine):
    a = store(vengine, FACTS[0], validFrom="2024-01-01")
    b = store(vengine, "We moved from pnpm to bun for package management",
              validFrom="2024-06-01")
    c = store(vengine, FACTS[1])
    assert vengine.flush()
    meta = vengine.index.all_ids("alpha")
    assert set(meta) == {a.id, b.id, c.id}
    vengine.supersede(p.SupersedeParams(old=a.id, by=b.id, project="alpha"))
    for _ in range(2):
        vengine.feedback(p.FeedbackParams(id=c.id, signal="outdated", project="alpha"))
    vengine.flush()
    meta = vengine.index.all_ids("alpha")
    assert meta[a.id]["status"] == "superseded"
    assert meta[a.id]["valid_until"] == timeutil.to_micros("2024-06-01T00:00:00.000000Z")
    assert meta[c.id]["trust"] == "flagged"
    vengine.forget(p.ForgetParams(id=b.id, reason="user_deleted", project="alpha"))
    vengine.flush()
    assert set(vengine.index.all_ids("alpha")) == {a.id, c.id}
    d = vengine.doctor(p.DoctorParams(project="alpha"))
    assert d.ok and d.missing == d.extra == d.stale == [] and d.indexed == 2


def test_doctor_reports_drift_and_reindex_repairs_it(vengine):
    ids = [store(vengine, t).id for t in FACTS]
    vengine.flush()
    vengine.index.delete("alpha", ids[:2])  # drift behind the engine's back
    vengine.index.update_meta("alpha", [ids[2]], [{"trust": "rejected"}])
    d = vengine.doctor(p.DoctorParams(project="alpha"))
    assert not d.ok and sorted(d.missing) == sorted(ids[:2]) and d.stale == [ids[2]]
    r = vengine.reindex(p.ReindexParams(project="alpha"))
    assert r.queued == len(FACTS) and r.indexed
    assert vengine.doctor(p.DoctorParams(project="alpha")).ok


def test_a_writer_killed_before_the_chroma_write_loses_nothing(tmp_path):
    """SIGKILL right after acknowledged stores, before they reach Chroma: restart converges."""
    data = tmp_path / "data"
    code = textwrap.dedent(f"""
        import sys, time
        from memls import protocol as p
        from memls.engine import Engine
        engine = Engine.open({str(data)!r})
        engine.worker.stop()          # the indexer never runs: acknowledged, not yet in Chroma
        for i in range(40):
            r = engine.store(p.StoreParams(text=f"acknowledged memory {{i}} about caching",
                                           project="crash"))
            print(r.id, flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    acknowledged = [proc.stdout.readline().strip() for _ in range(40)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    with Engine.open(data) as engine:  # start-up drains the outbox
        assert engine.flush(timeout=300)
        assert set(engine.index.all_ids("crash")) == set(acknowledged)
        assert engine.doctor(p.DoctorParams(project="crash")).ok
        hits = query(engine, "acknowledged memory about caching", project="crash", k=40)
        assert {h.id for h in hits.results} == set(acknowledged)


def test_missing_embedder_degrades_loudly_to_bm25(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(
        f'[models]\nembedder_dir = "{tmp_path / "nowhere"}"\n')
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


def test_a_serving_owner_loads_chroma_and_both_models_in_the_background(tmp_path):
    from memls.daemon import open_engine

    engine = open_engine(tmp_path / "data", front="test", serve=True)
    try:
        warming = engine._warming
        assert warming is not None  # started by open_engine, not by a query
        warming.join(timeout=120)
        assert not warming.is_alive()
        models = engine.models.status()
        assert (models.embedder.state, models.reranker.state) == ("loaded", "loaded")
        assert engine.index._client is not None
    finally:
        engine.close()


def test_background_loading_of_a_missing_model_stays_loud(tmp_path):
    from memls.daemon import open_engine

    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text(f'[models]\nembedder_dir = "{tmp_path / "nowhere"}"\n')
    engine = open_engine(data, front="test", serve=True)
    try:
        engine._warming.join(timeout=120)
        assert engine.models.status().embedder.state == "missing"
        stats = engine.stats(p.StatsParams(project="alpha"))
        assert any("embedder" in d and "missing" in d for d in stats.degraded)
    finally:
        engine.close()


def test_rerank_switched_off_by_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLS_RERANK", "0")
    with Engine.open(tmp_path / "data") as engine:
        for t in FACTS:
            store(engine, t)
        engine.flush()
        r = query(engine, "who owns billing", explain=True)
        assert r.results and all(h.explain.rerank is None for h in r.results)
        assert r.degraded == []
        assert engine.doctor(p.DoctorParams(project="alpha")).models["reranker"][
            "state"] == "disabled"


# ---------------------------------------------------------------- the hard filters, every source

PROJECTS = ["alpha", "beta", "@user"]
WORDS = ["cache", "deploy", "billing", "tests", "docker", "python"]


def _visible(row: dict, seen) -> bool:
    if row["project"] not in seen.projects or row["trust"] not in ("candidate", "verified"):
        return False
    vf, vu = row["valid_from"], row["valid_until"]
    if seen.valid_at is None and seen.as_of is None:
        return (row["status"] == "active" and vf <= seen.now and (vu is None or vu > seen.now))
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
            r = engine.store(p.StoreParams(
                text=f"Memory {i} about {words}", project=project,
                valid_from=f"{year}-0{1 + rng.randrange(9)}-01",
                valid_until=f"{year + 2}-01-01" if rng.random() < 0.2 else None))
            if rng.random() < 0.2:
                for _ in range(2):
                    engine.feedback(p.FeedbackParams(id=r.id, signal="outdated",
                                                     project=project))
            elif rng.random() < 0.1:
                engine.review(p.ReviewParams(action="reject", id=r.id, project=project))
        for project in PROJECTS:  # a supersession chain in each project
            old = engine.store(p.StoreParams(text="We cache with memcached", project=project,
                                             valid_from="2021-01-01"))
            new = engine.store(p.StoreParams(text="We cache with redis now", project=project,
                                             valid_from="2023-01-01"))
            engine.supersede(p.SupersedeParams(old=old.id, by=new.id, project=project))
        assert engine.flush(timeout=300)
        yield engine


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    project=st.sampled_from(["alpha", "beta"]),
    words=st.lists(st.sampled_from(WORDS + ["memcached", "redis"]), min_size=1, max_size=3),
    valid_at=st.one_of(st.none(), st.dates(min_value=__import__("datetime").date(2019, 1, 1),
                                           max_value=__import__("datetime").date(2030, 1, 1))),
    as_of=st.one_of(st.none(), st.just("2020-01-01"), st.just("2999-01-01")),
    include_user=st.booleans(),
)
def test_no_candidate_source_yields_a_filtered_memory(filter_engine, project, words, valid_at,
                                                      as_of, include_user):
    engine = filter_engine
    text = " ".join(words)
    seen = engine.visibility(project, valid_at=valid_at and valid_at.isoformat(), as_of=as_of,
                             include_user=include_user)
    rows = {r["id"]: dict(r) for r in engine.db.read(
        "SELECT id, project, status, trust, valid_from, valid_until, recorded_at, "
        "invalidated_at FROM memories")}
    allowed = {i for i, row in rows.items() if _visible(row, seen)}
    config = engine.retrieval
    for source in (_retriever(engine).lexical(seen, text, 200),
                   _retriever(engine).vector(seen, text, 200)):
        assert set(source) <= allowed
    result = engine.query(p.QueryParams(
        query=text, project=project, k=50, valid_at=valid_at and valid_at.isoformat(),
        as_of=as_of, include_user=include_user))
    assert {h.id for h in result.results} <= allowed
    # and nothing visible was lost by the vector filter: it returns every allowed memory
    # when asked for enough
    got = set(_retriever(engine).vector(seen, text, 200))
    assert got == allowed, (sorted(allowed - got), sorted(got - allowed))


def test_vector_search_reaches_past_filtered_nearest_neighbours(vengine):
    """The nearest memories are flagged: the unfiltered fast path finds none that pass, and
    the filtered search still returns the nearest one that does."""
    flagged = [store(vengine, f"We cache sessions with memcached, variant {i}", "nn").id
               for i in range(4)]
    keep = store(vengine, "Deploys go out on Fridays", "nn").id
    for memory_id in flagged:
        for _ in range(3):
            vengine.feedback(p.FeedbackParams(id=memory_id, signal="outdated", project="nn"))
    assert vengine.flush(timeout=120)
    seen = vengine.visibility("nn", valid_at=None, as_of=None, include_user=False)
    assert list(_retriever(vengine).vector(seen, "memcached session cache", 1)) == [keep]


_VECTORS: dict[str, object] = {}


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    project=st.sampled_from(["alpha", "beta"]),
    words=st.lists(st.sampled_from(WORDS + ["memcached", "redis"]), min_size=1, max_size=3),
    valid_at=st.one_of(st.none(), st.just("2021-06-01"), st.just("2024-06-01")),
    include_user=st.booleans(),
    n=st.sampled_from([1, 2, 5, 12]),
)
def test_vector_candidates_are_the_nearest_that_pass_the_filters(filter_engine, project, words,
                                                                 valid_at, include_user, n):
    """The fast path (unfiltered search, SQL filter) and its fallback (Chroma `where`, taken
    when too few of the 2n nearest pass) both return the n nearest allowed memories."""
    import numpy as np

    engine = filter_engine
    text = " ".join(words)
    seen = engine.visibility(project, valid_at=valid_at, as_of=None, include_user=include_user)
    rows = {r["id"]: dict(r) for r in engine.db.read(
        "SELECT id, project, status, trust, valid_from, valid_until, recorded_at, "
        "invalidated_at, content FROM memories")}
    if not _VECTORS:  # the stored vectors (the int8 embedder's output varies with its batch)
        for name in PROJECTS:
            got = engine.index.existing(name).get(include=["embeddings"])
            _VECTORS.update(zip(got["ids"], got["embeddings"]))
    query = engine.models.embedder.embed([text])[0]
    found = _retriever(engine).vector(seen, text, n)
    for project_ in seen.projects:
        allowed = sorted((i for i, row in rows.items()
                          if row["project"] == project_ and _visible(row, seen)),
                         key=lambda i: -float(np.dot(_VECTORS[i], query)))
        got = [i for i in found if rows[i]["project"] == project_]
        assert set(got) <= set(allowed)
        assert len(got) == min(n, len(allowed))
        if len(allowed) > n:  # nothing nearer was left out (HNSW is exact at this size)
            worst = min(float(np.dot(_VECTORS[i], query)) for i in got)
            assert float(np.dot(_VECTORS[allowed[n]], query)) <= worst + 1e-3


# ---------------------------------------------------------------- a Chroma server

@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    port = free_port()
    chroma = Path(sys.executable).with_name("chroma")
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(tmp_path_factory.mktemp("chroma-server")),
         "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    if not wait_for_port(port):
        proc.kill()
        pytest.fail("chroma run did not start")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=30)


def test_the_same_code_against_a_chroma_server(tmp_path, chroma_server, monkeypatch, models):
    monkeypatch.setenv("MEMLS_CHROMA_URL", chroma_server)
    with Engine.open(tmp_path / "data", models=models) as engine:
        assert engine.index.url == chroma_server
        ids = {t: store(engine, t).id for t in FACTS}
        store(engine, "Bob owns billing in the other project", project="beta")
        assert engine.flush()
        assert not (tmp_path / "data" / "chroma").exists()  # nothing embedded
        r = query(engine, "who is responsible for invoices and payments", k=3)
        assert r.degraded == [] and r.results[0].id == ids[FACTS[2]]
        assert all(h.project == "alpha" for h in r.results)
        engine.forget(p.ForgetParams(id=ids[FACTS[2]], reason="user_deleted", project="alpha"))
        engine.flush()
        assert ids[FACTS[2]] not in engine.index.all_ids("alpha")
        assert engine.doctor(p.DoctorParams(project="alpha")).ok


def test_reads_never_create_a_collection(vengine):
    store(vengine, FACTS[0])
    vengine.flush()
    before = len(vengine.index.client.list_collections())
    assert query(vengine, "anything", project="typo-project").results == []
    assert vengine.doctor(p.DoctorParams(project="typo-project")).ok
    assert len(vengine.index.client.list_collections()) == before
