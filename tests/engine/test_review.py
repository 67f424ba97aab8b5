"""Feedback and the review verbs, example by example (the state machine as a property is in
test_review_state_machine.py)."""

from __future__ import annotations

import pytest

from engine_helpers import ids, query, store
from memls import protocol as p
from memls.errors import InvalidInput, Refused


def test_feedback_records_signal_with_query_and_flags_at_minus_three(engine):
    m = store(engine, "Run migrations by hand")
    r1 = engine.feedback(
        p.FeedbackParams(id=m.id, signal="unhelpful", project="alpha", query="how to migrate")
    )
    assert (r1.score, r1.trust, r1.transition) == (-1, "candidate", None)
    r2 = engine.feedback(p.FeedbackParams(id=m.id, signal="outdated", project="alpha"))
    assert (r2.score, r2.trust) == (-3, "flagged")
    assert (r2.transition.from_trust, r2.transition.to_trust) == ("candidate", "flagged")
    rows = engine.db.read("SELECT signal, delta, score_after, query FROM feedback ORDER BY seq")
    assert [tuple(r) for r in rows] == [
        ("unhelpful", -1, -1, "how to migrate"),
        ("outdated", -2, -3, None),
    ]
    queue = engine.review(p.ReviewParams(action="list", project="alpha")).memories
    assert [q.id for q in queue] == [m.id]
    # the score recovers: the flag is left again, not kept forever
    r3 = engine.feedback(p.FeedbackParams(id=m.id, signal="helpful", project="alpha"))
    assert (r3.score, r3.trust) == (-2, "candidate")
    assert engine.review(p.ReviewParams(action="list", project="alpha")).memories == []


def test_review_verbs_leave_every_state_and_are_recorded(engine):
    m = store(engine, "Prefer composition over inheritance")
    for _ in range(3):
        engine.feedback(p.FeedbackParams(id=m.id, signal="unhelpful", project="alpha"))
    assert query(engine, "composition").results == []
    approved = engine.review(
        p.ReviewParams(action="approve", id=m.id, project="alpha", note="still true")
    )
    assert approved.transition.to_trust == "verified" and approved.memories[0].trust == "verified"
    assert ids(query(engine, "composition")) == [m.id]
    engine.review(p.ReviewParams(action="reject", id=m.id, project="alpha"))
    assert query(engine, "composition").results == []
    rejected = engine.review(p.ReviewParams(action="list", project="alpha", state="rejected"))
    assert [x.id for x in rejected.memories] == [m.id]
    engine.review(p.ReviewParams(action="restore", id=m.id, project="alpha"))
    assert ids(query(engine, "composition")) == [m.id]
    with pytest.raises(Refused):
        engine.review(p.ReviewParams(action="restore", id=m.id, project="alpha"))
    with pytest.raises(InvalidInput) as err:
        engine.review(p.ReviewParams(action="approve", project="alpha"))
    assert err.value.field == "id"
    rows = engine.db.read(
        "SELECT from_trust, to_trust, cause, note FROM trust_transitions ORDER BY seq"
    )
    assert [tuple(r) for r in rows] == [
        ("candidate", "flagged", "feedback", None),
        ("flagged", "verified", "approve", "still true"),
        ("verified", "rejected", "reject", None),
        ("rejected", "candidate", "restore", None),
    ]
