"""A missing, blank or malformed project is refused by every engine method and by the wire
parser, naming the field `project`, and changes nothing (never read as "all projects")."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine_helpers import store
from memls import protocol
from memls.engine import Engine
from memls.errors import InvalidInput
from property_helpers import Fresh

WHITESPACE = st.text(
    alphabet=st.sampled_from(
        [
            " ",
            "\t",
            "\n",
            "\r",
            "\x0b",
            "\x0c",
            "\xa0",
            "\u3000",
            "\u2003",
            "\u2000",
            "\u2028",
            "\u2029",
            "\x1c",
            "\x1f",
            "\x85",
            "\u1680",
            "\u205f",
            "\u202f",
        ]
    ),
    min_size=0,
    max_size=6,
)


def _calls(eng: Engine, project):
    """Every engine method, with otherwise valid parameters, given `project`."""
    mid = "m_0123456789abcdef"
    return {
        "store": lambda: eng.store(protocol.StoreParams(text="deploy cache", project=project)),
        "get": lambda: eng.get(protocol.GetParams(id=mid, project=project)),
        "list": lambda: eng.list(protocol.ListParams(project=project)),
        "list+user": lambda: eng.list(protocol.ListParams(project=project, include_user=True)),
        "query": lambda: eng.query(protocol.QueryParams(query="deploy", project=project)),
        "query+user": lambda: eng.query(
            protocol.QueryParams(query="deploy", project=project, include_user=True)
        ),
        "supersede": lambda: eng.supersede(
            protocol.SupersedeParams(old=mid, by=mid + "0", project=project)
        ),
        "feedback": lambda: eng.feedback(
            protocol.FeedbackParams(id=mid, signal="helpful", project=project)
        ),
        "review list": lambda: eng.review(protocol.ReviewParams(action="list", project=project)),
        "review approve": lambda: eng.review(
            protocol.ReviewParams(action="approve", id=mid, project=project)
        ),
        "forget": lambda: eng.forget(
            protocol.ForgetParams(id=mid, reason="user_deleted", project=project)
        ),
        "forgotten": lambda: eng.forgotten(protocol.ForgottenParams(project=project)),
        "stats": lambda: eng.stats(protocol.StatsParams(project=project)),
        "audit": lambda: eng.audit(protocol.AuditParams(project=project)),
        "maintain": lambda: eng.maintain(protocol.MaintainParams(project=project)),
        "dead_letters": lambda: eng.dead_letters(protocol.MaintainParams(project=project)),
        "export": lambda: list(eng.export(project)),
        "import": lambda: eng.import_(project, ['{"format": "memls-export", "version": 1}']),
        "conflicts": lambda: eng.conflicts(protocol.ConflictsParams(project=project)),
        "resolve": lambda: eng.resolve(
            protocol.ResolveParams(a=mid, b=mid + "0", action="dismiss", project=project)
        ),
        "doctor": lambda: eng.doctor(protocol.DoctorParams(project=project)),
        "reindex": lambda: eng.reindex(protocol.ReindexParams(project=project)),
    }


@pytest.fixture(scope="module")
def shared_engine():
    fx = Fresh()
    # Something to leak, were an empty project ever read as "all projects".
    fx.engine.store(protocol.StoreParams(text="deploy cache", project="alpha"))
    assert fx.engine.flush(timeout=30)  # so stats (index_pending) is stable
    yield fx
    fx.close()


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(project=st.one_of(st.none(), WHITESPACE))
def test_empty_project_refused_everywhere(shared_engine, project) -> None:
    eng = shared_engine.engine
    before = eng.stats(protocol.StatsParams(project="alpha"))
    for name, call in _calls(eng, project).items():
        with pytest.raises(InvalidInput) as info:
            call()
        assert info.value.field == "project", (name, repr(project), info.value)
    after = eng.stats(protocol.StatsParams(project="alpha"))
    assert before == after
    assert eng.db.read("SELECT count(*) FROM memories")[0][0] == 1
    assert eng.db.read("SELECT count(*) FROM audit")[0][0] == 1


@settings(max_examples=30, deadline=None)
@given(project=st.one_of(st.none(), WHITESPACE))
def test_empty_project_refused_by_the_wire_parser(project) -> None:
    # Fronts parse camelCase dicts first; either the parser or the engine must refuse, with
    # field "project" either way.
    kinds = [
        (protocol.StoreParams, {"text": "x"}),
        (protocol.GetParams, {"id": "m_1"}),
        (protocol.ListParams, {}),
        (protocol.QueryParams, {"query": "x"}),
        (protocol.SupersedeParams, {"old": "m_1", "by": "m_2"}),
        (protocol.FeedbackParams, {"id": "m_1", "signal": "helpful"}),
        (protocol.ReviewParams, {"action": "list"}),
        (protocol.ForgetParams, {"id": "m_1", "reason": "user_deleted"}),
        (protocol.ForgottenParams, {}),
        (protocol.StatsParams, {}),
        (protocol.AuditParams, {}),
        (protocol.MaintainParams, {}),
        (protocol.ConflictsParams, {}),
        (protocol.ResolveParams, {"a": "m_1", "b": "m_2", "action": "dismiss"}),
        (protocol.DoctorParams, {}),
        (protocol.ReindexParams, {}),
    ]
    for kind, data in kinds:
        try:
            parsed = protocol.parse(kind, {**data, "project": project})
        except InvalidInput as exc:
            assert exc.field == "project", (kind, exc)
            continue
        from memls.scope import project_key

        with pytest.raises(InvalidInput) as info:
            project_key(parsed.project)
        assert info.value.field == "project"


def test_malformed_project_refused(shared_engine) -> None:
    # Not a string, a NUL inside, or longer than 512 characters once normalised.
    for bad in (5, b"alpha", ["alpha"], "al\x00pha", "x" * 513, " " + "y" * 513 + " "):
        for name, call in _calls(shared_engine.engine, bad).items():
            with pytest.raises(InvalidInput) as info:
                call()
            assert info.value.field == "project", name


# ---------------------------------------------------------------- examples


@pytest.mark.parametrize("project", [None, "", "   ", "\t\n", "\u3000"])
def test_every_operation_refuses_a_missing_or_blank_project(engine, project):
    store(engine, "a fact")
    calls = [
        lambda: engine.store(protocol.StoreParams(text="x", project=project)),
        lambda: engine.get(protocol.GetParams(id="m_x", project=project)),
        lambda: engine.list(protocol.ListParams(project=project)),
        lambda: engine.query(protocol.QueryParams(query="fact", project=project)),
        lambda: engine.supersede(protocol.SupersedeParams(old="a", by="b", project=project)),
        lambda: engine.feedback(protocol.FeedbackParams(id="a", signal="helpful", project=project)),
        lambda: engine.review(protocol.ReviewParams(action="list", project=project)),
        lambda: engine.forget(protocol.ForgetParams(id="a", reason="dedup", project=project)),
        lambda: engine.forgotten(protocol.ForgottenParams(project=project)),
        lambda: engine.stats(protocol.StatsParams(project=project)),
        lambda: engine.audit(protocol.AuditParams(project=project)),
        lambda: engine.maintain(protocol.MaintainParams(project=project)),
        lambda: list(engine.export(project)),
    ]
    for call in calls:
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == "project"
