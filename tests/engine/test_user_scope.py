"""The @user scope is mixed into a project's reads only when the request opts in."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import ids, query, store
from memls import protocol
from memls.errors import NotFound
from memls.scope import USER_PROJECT
from property_helpers import (
    NAME_FAMILIES,
    QUERY_ALL,
    TRUST_STATES,
    USER_FAMILY,
    Fresh,
    text_strategy,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    user_texts=st.lists(text_strategy(), min_size=1, max_size=4, unique=True),
    project_texts=st.lists(text_strategy(), min_size=0, max_size=4, unique=True),
    user_variant=st.sampled_from(USER_FAMILY),
    project=st.sampled_from([f[0] for f in NAME_FAMILIES]),
)
def test_user_scope_only_with_include_user(user_texts, project_texts, user_variant, project):
    with Fresh() as fx:
        eng = fx.engine
        user_ids = {
            eng.store(protocol.StoreParams(text=t, project=user_variant)).id for t in user_texts
        }
        own_ids = {
            eng.store(protocol.StoreParams(text=t, project=project)).id for t in project_texts
        }
        for mid in user_ids:
            assert eng.get(protocol.GetParams(id=mid, project=user_variant)).project == USER_PROJECT

        def q(include_user=None):
            data = {"query": QUERY_ALL, "project": project, "k": 1000}
            if include_user is not None:
                data["includeUser"] = include_user
            return {h.id for h in eng.query(protocol.parse(protocol.QueryParams, data)).results}

        def ls(include_user=None):
            data = {"project": project, "limit": 1000}
            if include_user is not None:
                data["includeUser"] = include_user
            return {m.id for m in eng.list(protocol.parse(protocol.ListParams, data)).memories}

        assert q() == q(False) == own_ids
        # One result per canonical text: words stored in both scopes come back once.
        both = set(user_texts) & set(project_texts)
        assert own_ids | user_ids >= q(True)
        assert len(q(True)) == len(own_ids | user_ids) - len(both)
        assert not both or q(True) != own_ids | user_ids
        assert ls() == ls(False) == own_ids
        assert ls(True) == own_ids | user_ids
        # No other read path of the project shows the user scope.
        for mid in user_ids:
            with pytest.raises(NotFound):
                eng.get(protocol.GetParams(id=mid, project=project))
        assert eng.stats(protocol.StatsParams(project=project)).memories == len(own_ids)
        for state in TRUST_STATES:
            rv = eng.review(protocol.ReviewParams(action="list", project=project, state=state))
            assert not ({m.id for m in rv.memories} & user_ids)
        assert eng.flush(timeout=30)
        assert {
            e.memory_id for e in eng.audit(protocol.AuditParams(project=project)).entries
        } == own_ids
        assert all(line["row"]["project"] != USER_PROJECT for line in list(eng.export(project))[1:])


# ---------------------------------------------------------------- examples


def test_user_scope_only_with_explicit_opt_in(engine):
    u = store(engine, "I prefer short commit messages", project="@user")
    mine = store(engine, "Commit messages follow conventional commits")
    assert ids(query(engine, "commit messages")) == [mine.id]
    both = ids(query(engine, "commit messages", includeUser=True))
    assert set(both) == {u.id, mine.id}
    assert len(engine.list(protocol.ListParams(project="alpha")).memories) == 1
    assert len(engine.list(protocol.ListParams(project="alpha", include_user=True)).memories) == 2
