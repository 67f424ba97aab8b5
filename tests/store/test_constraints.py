"""The schema's own guards: CHECK constraints and triggers hold even against raw SQL."""

from __future__ import annotations

import sqlite3

import pytest

from engine_helpers import store
from memls import protocol as p


def test_the_database_refuses_an_empty_project_too(engine):
    for bad in ("", " ", " padded", "x\t"):
        with pytest.raises(sqlite3.IntegrityError):
            with engine.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO memories (id, project, content, type, valid_from, recorded_at, "
                    "content_hash, canonical_hash) "
                    "VALUES ('m1', ?, 'c', 'note', 't', 't', 'h', 'h')",
                    (bad,),
                )


def test_database_check_constraints_hold_epistemic_state(engine):
    r = store(engine, "a fact")
    for column, value in (("status", "deleted"), ("trust", "maybe"), ("type", "opinion")):
        with pytest.raises(sqlite3.IntegrityError):
            with engine.db.transaction() as conn:
                conn.execute(f"UPDATE memories SET {column} = ? WHERE id = ?", (value, r.id))
    assert engine.get(p.GetParams(id=r.id, project="alpha")).trust == "candidate"


def test_audit_is_append_only_and_names_the_front(engine):
    m = store(engine, "Audited fact")
    engine.feedback(p.FeedbackParams(id=m.id, signal="helpful", project="alpha"))
    entries = engine.audit(p.AuditParams(project="alpha", id=m.id)).entries
    assert [e.op for e in entries] == ["feedback", "store"]
    assert {e.front for e in entries} == {"test"}
    for sql in ("UPDATE audit SET op = 'x'", "DELETE FROM audit"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            with engine.db.transaction() as conn:
                conn.execute(sql)
    assert engine.audit(p.AuditParams(project="beta")).entries == []
