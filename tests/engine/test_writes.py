"""Writes through the engine against a real SQLite store: store, forget, their validation,
and all-or-nothing on failure."""

from __future__ import annotations

import sqlite3

import pytest

from engine_helpers import count_rows, ids, query, store
from memls import protocol as p
from memls.errors import InvalidInput, NotFound


def test_store_returns_the_memory_with_its_columns(engine):
    r = store(engine, "We use pnpm for packages", type="decision", sourceUri="file:///a.md")
    assert r.created and not r.duplicate
    m = r.memory
    assert (m.project, m.type, m.status, m.trust) == ("alpha", "decision", "active", "candidate")
    assert m.valid_from == m.recorded_at and m.valid_until is None
    assert m.source_uri == "file:///a.md" and len(m.canonical_hash) == 64


def test_store_validates_before_writing(engine):
    with pytest.raises(InvalidInput) as err:
        store(engine, "   ")
    assert err.value.field == "text"
    with pytest.raises(InvalidInput) as err:
        store(engine, "x", validFrom="yesterday")
    assert err.value.field == "validFrom"
    with pytest.raises(InvalidInput) as err:
        store(engine, "x", validFrom="2025-02-01", validUntil="2025-01-01")
    assert err.value.field == "validUntil"
    with pytest.raises(InvalidInput) as err:
        p.parse(p.StoreParams, {"text": "x", "project": "a", "type": "opinion"})
    assert err.value.field == "type" and "decision" in str(err.value)
    with pytest.raises(NotFound):
        store(engine, "x", derivedFrom="m_nope")
    assert count_rows(engine, "memories") == 0 and count_rows(engine, "audit") == 0


def test_dates_outside_four_digit_years_are_refused(engine):
    for bad in ("0005-01-01", "9999-12-31T23:00:00-05:00"):
        with pytest.raises(InvalidInput) as err:
            store(engine, "x", validFrom=bad)
        assert err.value.field == "validFrom"
    assert count_rows(engine, "memories") == 0


# ------------------------------------------------------------------ forgetting


def test_forget_logs_reason_preview_and_removes_the_memory(engine):
    old = store(engine, "Old staging note")
    m = store(engine, "The staging password rotates monthly", type="fact")
    engine.supersede(p.SupersedeParams(old=old.id, by=m.id, project="alpha"))
    r = engine.forget(p.ForgetParams(id=m.id, reason="user_deleted", project="alpha"))
    assert r.reason == "user_deleted"
    with pytest.raises(NotFound) as err:
        engine.get(p.GetParams(id=m.id, project="alpha"))
    assert "user_deleted" in str(err.value)
    assert query(engine, "staging password").results == []
    assert count_rows(engine, "edges") == 0
    fts = engine.db.read("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'password'")
    assert fts[0][0] == 0
    log = engine.forgotten(p.ForgottenParams(project="alpha")).entries
    assert [(e.memory_id, e.reason, e.type) for e in log] == [(m.id, "user_deleted", "fact")]
    assert "staging password" in log[0].preview
    assert engine.forgotten(p.ForgottenParams(project="alpha", reason="decay")).entries == []
    assert engine.forgotten(p.ForgottenParams(project="beta")).entries == []
    with pytest.raises(InvalidInput) as err:
        p.parse(p.ForgetParams, {"id": m.id, "reason": "bored", "project": "alpha"})
    assert err.value.field == "reason"


def test_a_failure_inside_forget_leaves_nothing_half_written(engine):
    m = store(engine, "Keep me whole")
    with engine.db.transaction() as conn:  # inject a real failure at the last step
        conn.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON audit WHEN new.op = 'forget' "
            "BEGIN SELECT RAISE(ABORT, 'injected'); END"
        )
    with pytest.raises(sqlite3.IntegrityError):
        engine.forget(p.ForgetParams(id=m.id, reason="user_deleted", project="alpha"))
    assert engine.get(p.GetParams(id=m.id, project="alpha")).content == "Keep me whole"
    assert count_rows(engine, "forgetting_log") == 0 and count_rows(engine, "tombstones") == 0
    assert ids(query(engine, "keep whole")) == [m.id]


def test_a_failure_inside_store_leaves_nothing_half_written(engine):
    with engine.db.transaction() as conn:
        conn.execute(
            "CREATE TRIGGER boom BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'injected'); END"
        )
    with pytest.raises(sqlite3.IntegrityError):
        store(engine, "never half written")
    assert count_rows(engine, "memories") == 0
    assert engine.db.read("SELECT count(*) FROM memories_fts")[0][0] == 0
