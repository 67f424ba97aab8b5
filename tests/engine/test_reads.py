"""Reads through the engine: get, query, list and stats stay in the project and hide what
review took out."""

from __future__ import annotations

import pytest

from engine_helpers import ids, query, store
from memls import protocol as p
from memls.errors import InvalidInput, NotFound


def test_get_of_another_projects_id_is_not_found(engine):
    r = store(engine, "alpha's secret", project="alpha")
    assert engine.get(p.GetParams(id=r.id, project="alpha")).content == "alpha's secret"
    with pytest.raises(NotFound):
        engine.get(p.GetParams(id=r.id, project="beta"))


def test_query_finds_by_words_and_stays_in_scope(engine):
    a = store(engine, "We deploy the API with Kubernetes", project="alpha")
    store(engine, "We deploy the API with Nomad", project="beta")
    store(engine, "Lunch is at noon", project="alpha")
    r = query(engine, "how do we deploy the api")
    assert ids(r) == [a.id] and r.project == "alpha"
    assert r.results[0].score > 0


def test_query_hides_flagged_and_rejected_but_list_shows_them(engine):
    a = store(engine, "Use tabs for indentation")
    for _ in range(2):
        engine.feedback(p.FeedbackParams(id=a.id, signal="outdated", project="alpha"))
    assert query(engine, "indentation").results == []
    listed = engine.list(p.ListParams(project="alpha")).memories
    assert [m.trust for m in listed] == ["flagged"]


def test_query_type_filter_and_k(engine):
    d = store(engine, "Database is Postgres", type="decision")
    store(engine, "Database tests use a fresh Postgres schema", type="convention")
    assert ids(query(engine, "postgres database", types=["decision"])) == [d.id]
    assert len(query(engine, "postgres database", k=1).results) == 1
    with pytest.raises(InvalidInput) as err:
        p.parse(p.QueryParams, {"query": "x", "project": "a", "k": 0})
    assert err.value.field == "k"


def test_query_of_punctuation_only_returns_nothing(engine):
    store(engine, "something")
    assert query(engine, "?!").results == []  # lexical: no words, no candidates
    with pytest.raises(InvalidInput):
        query(engine, "  ")


def test_stats_count_only_the_project(engine):
    a = store(engine, "one", type="decision")
    store(engine, "two")
    store(engine, "three", project="beta")
    engine.forget(p.ForgetParams(id=a.id, reason="dedup", project="alpha"))
    s = engine.stats(p.StatsParams(project="alpha"))
    assert (s.memories, s.forgotten, s.tombstones) == (1, 1, 1)
    assert s.by_type == {"note": 1} and s.schema_version >= 2
