"""Deduplication by canonical content, per project; tombstones of forgotten content; rejected
content stays rejected."""

from __future__ import annotations

import pytest

from engine_helpers import count_rows, store
from memls import protocol as p
from memls.errors import Refused


def test_duplicate_content_in_the_same_project_returns_the_existing_id(engine):
    first = store(engine, "We use **pnpm** for packages")
    again = store(engine, "  we use pnpm\tfor   PACKAGES ")
    assert again.duplicate and not again.created and again.id == first.id
    other = store(engine, "We use pnpm for packages", project="beta")
    assert other.created and other.id != first.id
    assert count_rows(engine, "memories") == 2


def test_forgotten_content_is_refused_naming_reason_and_date_unless_forced(engine):
    r = store(engine, "Deploy on Fridays")
    engine.forget(p.ForgetParams(id=r.id, reason="user_deleted", project="alpha"))
    with pytest.raises(Refused) as err:
        store(engine, "deploy on fridays")
    assert "user_deleted" in str(err.value) and "forgotten on 2025-" in str(err.value)
    assert count_rows(engine, "memories") == 0
    forced = store(engine, "deploy on fridays", force=True)
    assert forced.created and forced.tombstone_cleared
    ops = [e.op for e in engine.audit(p.AuditParams(project="alpha")).entries]
    assert "tombstone_cleared" in ops
    assert count_rows(engine, "tombstones") == 0


def test_storing_rejected_content_again_says_so(engine):
    m = store(engine, "Use global variables for config")
    engine.review(p.ReviewParams(action="reject", id=m.id, project="alpha"))
    with pytest.raises(Refused, match="rejected on review"):
        store(engine, "use global variables for config")
    engine.review(p.ReviewParams(action="restore", id=m.id, project="alpha"))
    assert store(engine, "use global variables for config").duplicate
